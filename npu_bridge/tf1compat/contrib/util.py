"""tf.contrib.util: TensorFlow's tensor_util functions, as TF 1.15 re-exported them."""
from tensorflow.python.framework.tensor_util import MakeNdarray as make_ndarray  # noqa: F401
from tensorflow.python.framework.tensor_util import constant_value, make_tensor_proto  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
