"""Where tf.estimator lives: TensorFlow's own up to 2.15 (the last release that ships it); on later TensorFlow
npu_bridge's (npu_bridge.tf1compat.estimator), so NPUEstimator, NPURunConfig and the Estimator helpers work on
every supported TensorFlow."""
import importlib

import tensorflow.compat.v1 as tf

from npu_bridge.tf1compat.estimator_paths import ESTIMATOR_PACKAGE, tensorflow_has_estimator

ESTIMATOR = tf.estimator if tensorflow_has_estimator() else importlib.import_module(ESTIMATOR_PACKAGE)
