"""tf.contrib.metrics: tf-slim's metrics (TF 1.15's contrib/metrics, extracted): accuracy, the streaming_* ops
with their local variables and update ops, aggregate_metric_map, ..."""
from tf_slim.metrics import *

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
