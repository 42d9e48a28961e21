"""tensorflow.contrib.cudnn_rnn.python.ops: TF 1.15's package path (cudnn_rnn_ops)."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
