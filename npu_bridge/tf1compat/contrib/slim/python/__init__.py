"""tensorflow.contrib.slim.python: TF 1.15's package path; its `slim` package is tf-slim itself."""
import tf_slim as slim  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
