"""TF 1.15's deep module path of contrib.learn, for the datasets helpers ported input pipelines import."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
