"""`tensorflow.contrib.rnn.python.ops`: core_rnn_cell and rnn_cell, as TF 1.15 laid them out."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
