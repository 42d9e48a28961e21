"""tensorflow.contrib.seq2seq.python.ops.loss: TF 1.15's module path for sequence_loss."""
from npu_bridge.tf1compat.contrib.seq2seq import sequence_loss  # noqa: F401
