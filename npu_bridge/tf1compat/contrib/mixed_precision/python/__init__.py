"""tensorflow.contrib.mixed_precision.python: TF 1.15's package path. Its two modules, loss_scale_manager and
loss_scale_optimizer, are the mixed_precision package itself (tf1compat.ALIASES), which holds what they held."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
