"""`tensorflow.contrib.rnn.ops`: TF 1.15's package of generated op wrappers for the fused LSTM kernels."""
from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
