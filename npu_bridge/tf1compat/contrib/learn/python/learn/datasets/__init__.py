"""`tensorflow.contrib.learn.python.learn.datasets`: base, as TF 1.15 laid it out."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
