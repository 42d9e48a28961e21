"""tensorflow.contrib.framework.python.framework: TF 1.15's package path, for tensor_util."""
from npu_bridge.tf1compat.contrib.framework.python.framework import tensor_util  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
