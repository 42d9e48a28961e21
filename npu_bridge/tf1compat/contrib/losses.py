"""tf.contrib.losses: tf-slim's losses (TF 1.15's contrib/losses, extracted), and metric_learning."""
from tf_slim.losses import *
from tf_slim.losses import metric_learning  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
