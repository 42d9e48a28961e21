"""Stands for the `tensorflow_estimator` package on TensorFlow >= 2.16 (where the real one no longer imports), so
`import tensorflow_estimator` and `tensorflow_estimator.python.estimator...` reach npu_bridge's Estimator."""
from npu_bridge.tf1compat import estimator  # noqa: F401  (tensorflow_estimator.estimator)
