"""Stands for `tensorflow_estimator.python`, whose `estimator` is npu_bridge's Estimator package."""
from npu_bridge.tf1compat import estimator  # noqa: F401  (tensorflow_estimator.python.estimator)
