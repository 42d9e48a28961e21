"""tensorflow.contrib.all_reduce.python: TF 1.15's package path of the all_reduce module."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
