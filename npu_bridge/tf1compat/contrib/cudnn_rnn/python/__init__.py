"""tensorflow.contrib.cudnn_rnn.python: TF 1.15's package path."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
