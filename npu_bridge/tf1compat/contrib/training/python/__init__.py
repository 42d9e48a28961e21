"""tensorflow.contrib.training.python: TF 1.15's package path."""
from npu_bridge.tf1compat.contrib.training.python import training  # noqa: F401
