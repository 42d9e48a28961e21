"""NpuAllocFloatStatus / NpuGetFloatStatus / NpuClearFloatStatus (and the V2 pair): the overflow status register.

Scripts doing their own loss scaling read the register after the gradients, as the real NPULossScaleOptimizer does:

    status = npu_alloc_float_status()
    with tf.control_dependencies(grads):
        local = npu_get_float_status(status)
    finite = tf.reduce_all(tf.equal(0.0, local))

Older scripts compare the buffer itself with the cleared status, `tf.equal(status, cleared)`, relying on
NpuGetFloatStatus writing the status into the buffer in place: the buffer is therefore a (non-saved,
self-initialising) variable that npu_get_float_status assigns, and the comparison reads it after the write.

The reading is the same node NPULossScaleOptimizer uses (an Identity carrying contract.STATUS_ATTR): the
precision pass wires it to the overflow flags of every float16 result the reading depends on, through its data
and control inputs (core/precision/saturation.py), so a float16 overflow in saturation mode (the first-generation
Ascend910's default) makes the reading 1. Without the emulation, or with no float16 result upstream, it reads 0.
"""
import tensorflow.compat.v1 as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge import tf_private
from npu_bridge.core.contract import STATUS_ATTR

_V2_STATUS_SIZE = 8


def overflow_flag(inputs, name):
    """The register as a bool scalar, read after `inputs` (and whatever the caller's control scope holds)."""
    with tf.control_dependencies(inputs):
        flag = tf.identity(tf.constant(False), name=name)
    tf_private.set_attr(flag.op, STATUS_ATTR, attr_value_pb2.AttrValue(b=True))
    return flag


def npu_alloc_float_status(name=None):
    """A float32 [1] buffer for the status, zero: the reference of a variable in no collection (never saved,
    initialised by its first write), so that npu_get_float_status can write into it as the NPU does."""
    with tf.name_scope(name, "NpuAllocFloatStatus"):
        buffer = tf.Variable(tf.zeros([1], tf.float32), trainable=False, collections=[], use_resource=False,
                             name="float_status")
    return tf_private.variable_ref(buffer)


def npu_get_float_status(input_float, name=None):
    """The status after everything this op depends on: float32 shaped like `input_float`, 1 on overflow, else 0;
    written into the buffer too when `input_float` is npu_alloc_float_status's."""
    with tf.name_scope(name, "NpuGetFloatStatus", [input_float]) as scope:
        shape = tf.shape(input_float)
        flag = overflow_flag([shape], "overflow")
        status = tf.fill(shape, tf.cast(flag, tf.float32))
        if tf_private.is_ref_dtype(getattr(input_float, "dtype", tf.float32)):
            return tf.assign(input_float, status, name=scope)
        return tf.identity(status, name=scope)


def npu_clear_float_status(float_status, name=None):
    """Zeros shaped like `float_status`, after it was read (the register is cleared for the next step)."""
    with tf.name_scope(name, "NpuClearFloatStatus", [float_status]) as scope:
        status = tf.convert_to_tensor(float_status, tf.float32, name="float_status")
        with tf.control_dependencies([status]):
            return tf.zeros_like(status, name=scope)


def npu_get_float_status_v2(name=None):
    """The status as int32 [8] (every entry 1 on overflow, else 0), after what the caller's control scope holds."""
    with tf.name_scope(name, "NpuGetFloatStatusV2") as scope:
        flag = overflow_flag([], "overflow")
        return tf.fill([_V2_STATUS_SIZE], tf.cast(flag, tf.int32), name=scope)


def npu_clear_float_status_v2(name=None):
    """Clears the register: an op with no outputs, ordered by the caller's control scope."""
    return tf.no_op(name=name or "NpuClearFloatStatusV2")
