"""tf.contrib.staging: StagingArea, which TensorFlow still has among its data-flow ops."""
from tensorflow.python.ops.data_flow_ops import StagingArea  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
