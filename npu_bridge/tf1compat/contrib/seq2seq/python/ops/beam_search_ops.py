"""tensorflow.contrib.seq2seq.python.ops.beam_search_ops: TF 1.15's module path for the names it held."""
from npu_bridge.tf1compat.contrib.seq2seq.beam_search_ops import gather_tree  # noqa: F401
