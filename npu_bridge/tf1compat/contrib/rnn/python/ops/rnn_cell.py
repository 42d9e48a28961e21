"""TF 1.15's contrib.rnn.python.ops.rnn_cell: the contrib cells (from tf1compat.contrib.rnn) and the _Linear
helper that module imported from core_rnn_cell, which ported cells subclass or call."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.rnn import LayerNormBasicLSTMCell, NASCell  # noqa: F401
from npu_bridge.tf1compat.contrib.rnn.python.ops.core_rnn_cell import _Linear  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
