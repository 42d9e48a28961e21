"""`from npu_bridge.estimator import npu_aicore_ops`: FastGelu, LayerNorm and the V3 dropout, real signatures.

As in the real module, `npu_aicore_ops.npu_aicore_ops` is the generated op module (fast_gelu, fast_gelu_grad,
fused_layer_norm, drop_out_gen_mask_v3, ...), and the functions here wrap it.
"""
import numbers

import tensorflow.compat.v1 as tf
from tensorflow.python.framework import random_seed

from npu_bridge.emulated_ops import gen_npu_ops as npu_aicore_ops


def fast_gelu_v2(x, name=None):
    """x * sigmoid(1.702 x) (npu_bridge.emulated_ops.activations)."""
    return npu_aicore_ops.fast_gelu_v2(x, name)


def layer_norm(x, gamma, beta, begin_norm_axis=0, begin_params_axis=0, epsilon=0.0000001, name=None):
    """[y, mean, variance] of FusedLayerNorm."""
    return list(npu_aicore_ops.fused_layer_norm(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon, name))


def dropout_v3(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Dropout with DropOutGenMaskV3 / DropOutDoMaskV3; keep_prob == 1.0 (a Python float) returns x."""
    x = tf.convert_to_tensor(x, name="x")
    if not x.dtype.is_floating:
        raise ValueError(f"x must be a floating point tensor. Got a {x.dtype.name} tensor instead.")
    if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1.0:
        raise ValueError(f"keep_prob must be a float value or a scalar tensor in the range (0, 1], got {keep_prob:g}")
    if isinstance(keep_prob, float) and keep_prob == 1.0:
        return x
    seed, seed2 = random_seed.get_seed(seed)
    shape = tf.shape(x) if noise_shape is None else noise_shape
    with tf.name_scope(name, "dropout_v3", [x]):
        mask = npu_aicore_ops.drop_out_gen_mask_v3(shape, keep_prob, seed or 0, seed2 or 0)
        return npu_aicore_ops.drop_out_do_mask_v3(x, mask, keep_prob)
