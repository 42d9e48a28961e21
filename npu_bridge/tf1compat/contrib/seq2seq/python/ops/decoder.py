"""tensorflow.contrib.seq2seq.python.ops.decoder: TF 1.15's module path for the names it held."""
from npu_bridge.tf1compat.contrib.seq2seq.decoder import Decoder, dynamic_decode  # noqa: F401
