"""npu_bridge.estimator.npu_ops: NPU-specific ops the ported scripts call, built from TensorFlow ops.

`dropout` keeps the TF1 contract (keep probability, scale kept units by 1/keep_prob). The NPU implements it with
DropOutGenMask/DropOutDoMask; the random mask differs, the distribution does not (the pair itself is here too, as
drop_out_gen_mask / drop_out_do_mask). `initialize_system` and `shutdown_system` open and close the device on the
NPU; a CPU has nothing to open, so they are no-ops.

The fused ops (LARS, LARSV2, basic_lstm_cell, adam_apply_one_assign, adam_apply_one_with_decay_assign) keep the
real module's signatures and are built in npu_bridge.emulated_ops from ordinary TF ops. As in the real module,
`gen_npu_ops` is the generated op module, and the op functions ported scripts call through their own copies of
this file (lars_v2, lamb_apply_*, drop_out_*_mask[_v3], fast_gelu, fused_layer_norm, the float status ops,
dynamic_gru_v2) are importable from here as well.
"""
import numbers

import tensorflow.compat.v1 as tf
from tensorflow.python.framework import tensor_util

from npu_bridge.emulated_ops import gen_npu_ops
from npu_bridge.emulated_ops.gen_npu_ops import (  # noqa: F401  (the generated ops scripts reach through npu_ops)
    adam_apply_one_assign, adam_apply_one_with_decay_assign, basic_lstm_cell, drop_out_do_mask, drop_out_do_mask_v3,
    drop_out_gen_mask, drop_out_gen_mask_v3, dynamic_augru, dynamic_gru_v2, fast_gelu, fast_gelu_grad,
    fused_layer_norm, fused_layer_norm_grad, lamb_apply_optimizer_assign, lamb_apply_weight_assign, lars_v2,
    npu_alloc_float_status, npu_clear_float_status, npu_get_float_status)


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


def LARS(inputs_w, inputs_g, weight_decay, hyperpara=0.001, epsilon=0.00001, name=None):  # noqa: N802 (real name)
    """The LARS-scaled gradient of every (weight, gradient) pair: a list shaped like inputs_w."""
    return gen_npu_ops.lars(inputs_w, inputs_g, weight_decay, hyperpara=hyperpara, epsilon=epsilon, name=name)


def LARSV2(input_weight, input_grad, weight_decay, learning_rate, hyperpara=0.001, epsilon=0.00001,  # noqa: N802
           use_clip=False, name=None):
    """The LARS-scaled gradient of one weight (use_clip bounds the trust ratio by the learning rate)."""
    return lars_v2(input_weight, input_grad, weight_decay, learning_rate, hyperpara=hyperpara, epsilon=epsilon,
                   use_clip=use_clip, name=name)


def dropout_v3(x, keep_prob, noise_shape=None, seed=None, name=None):
    """`dropout` through the one-byte-per-element mask pair (DropOutGenMaskV3 / DropOutDoMaskV3)."""
    from npu_bridge.estimator.npu_aicore_ops import dropout_v3 as aicore_dropout_v3

    return aicore_dropout_v3(x, keep_prob, noise_shape=noise_shape, seed=seed, name=name)
