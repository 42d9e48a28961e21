"""tensorflow.contrib.framework.python.framework.tensor_util: the helpers ported scripts call, on TF's own."""
from tensorflow.python.framework import ops
from tensorflow.python.framework.tensor_util import MakeNdarray as make_ndarray  # noqa: F401
from tensorflow.python.framework.tensor_util import constant_value, make_tensor_proto  # noqa: F401
from tensorflow.python.framework.tensor_util import is_tf_type as is_tensor  # noqa: F401
from tensorflow.python.ops import array_ops, check_ops


def with_same_shape(expected_tensor, tensor):
    """`tensor`, checked to have `expected_tensor`'s shape: a ValueError now when both shapes are static, else an
    assertion that runs with it, as TF 1.15's did."""
    expected_shape = expected_tensor.get_shape()
    if expected_shape.is_fully_defined() and tensor.get_shape().is_fully_defined():
        expected_shape.assert_is_compatible_with(tensor.get_shape())
        return tensor
    check = check_ops.assert_equal(array_ops.shape(expected_tensor), array_ops.shape(tensor),
                                   message=f"{tensor.name} does not have the shape of {expected_tensor.name}")
    with ops.control_dependencies([check]):
        return array_ops.identity(tensor)
