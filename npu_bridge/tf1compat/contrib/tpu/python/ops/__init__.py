"""tensorflow.contrib.tpu.python.ops: TF 1.15's package path; tpu_ops is TensorFlow's own."""
from tensorflow.python.tpu.ops import tpu_ops  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
