"""tensorflow.contrib.tpu.python: TF 1.15's package path (tpu, ops)."""
from npu_bridge.tf1compat.contrib.tpu.python import ops, tpu  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
