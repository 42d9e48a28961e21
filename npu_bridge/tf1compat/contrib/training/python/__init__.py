"""tensorflow.contrib.training.python: TF 1.15's package path."""
from npu_bridge.tf1compat.contrib.training.python import training  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
