"""tensorflow.contrib.layers.python: TF 1.15's package path; its `layers` package is tf-slim's layers."""
from tf_slim import layers  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
