"""npu_bridge.estimator.npu_ops: NPU-specific ops the ported scripts call, built from TensorFlow ops.

`dropout` keeps the TF1 contract (keep probability, scale kept units by 1/keep_prob). The NPU implements it with
DropOutGenMask/DropOutDoMask; the random mask differs, the distribution does not. `initialize_system` and
`shutdown_system` open and close the device on the NPU; a CPU has nothing to open, so they are no-ops.
"""
import numbers

import tensorflow.compat.v1 as tf
from tensorflow.python.framework import tensor_util


def initialize_system(name=None):
    """No-op (the NPU opens its device here; the emulated device needs no setup)."""
    tf.logging.info("npu_bridge: initialize_system is a no-op on the emulated NPU")
    return tf.no_op(name=name or "npu_initialize_system")


def shutdown_system(name=None):
    """No-op (the NPU releases its device here)."""
    tf.logging.info("npu_bridge: shutdown_system is a no-op on the emulated NPU")
    return tf.no_op(name=name or "npu_shutdown_system")


def _check_keep_prob_value(keep_prob):
    if not 0 < keep_prob <= 1:
        raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob!r}")


def dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Keep each element of `x` with probability `keep_prob` and scale kept ones by 1/keep_prob.

    keep_prob may be a Python number or a scalar tensor (often a placeholder). keep_prob == 1 returns `x`.
    """
    if isinstance(keep_prob, numbers.Real):
        _check_keep_prob_value(keep_prob)
        if keep_prob == 1:
            return x
    else:
        constant = tensor_util.constant_value(tf.convert_to_tensor(keep_prob))
        if constant is not None:
            _check_keep_prob_value(float(constant))
    with tf.name_scope(name, "npu_dropout", [x]) as scope:
        x = tf.convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. Got a {x.dtype.name} tensor instead.")
        # tf.nn.dropout turns keep_prob into rate = 1 - keep_prob itself; passing rate spares the user its
        # "Please use `rate` instead of `keep_prob`" deprecation line for an argument their script never wrote.
        return tf.nn.dropout(x, rate=1 - keep_prob, noise_shape=noise_shape, seed=seed, name=scope)
