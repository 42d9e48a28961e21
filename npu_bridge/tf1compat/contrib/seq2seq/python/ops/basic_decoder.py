"""tensorflow.contrib.seq2seq.python.ops.basic_decoder: TF 1.15's module path for the names it held."""
from npu_bridge.tf1compat.contrib.seq2seq.basic_decoder import (  # noqa: F401
    BasicDecoder,
    BasicDecoderOutput,
)
