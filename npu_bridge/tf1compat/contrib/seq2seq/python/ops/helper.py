"""tensorflow.contrib.seq2seq.python.ops.helper: TF 1.15's module path for the names it held."""
from npu_bridge.tf1compat.contrib.seq2seq.helper import (  # noqa: F401
    GreedyEmbeddingHelper,
    Helper,
    TrainingHelper,
)
