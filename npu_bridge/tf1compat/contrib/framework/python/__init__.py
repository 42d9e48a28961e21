"""tensorflow.contrib.framework.python: TF 1.15's package path (ops, framework)."""
from npu_bridge.tf1compat.contrib.framework.python import framework, ops  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
