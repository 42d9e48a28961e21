"""contrib.tpu's tpu_estimator module: the estimator names of tf.contrib.tpu."""
from npu_bridge.tf1compat.contrib.tpu import TPUEstimator, TPUEstimatorSpec  # noqa: F401
