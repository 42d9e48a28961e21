"""FastGelu (and its gradient) and FusedLayerNorm (and its gradient), as the NPU's kernels compute them.

FastGelu is GELU's sigmoid approximation x * sigmoid(1.702 x), which the kernel evaluates without overflow as
x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|)). FusedLayerNorm normalises over the axes from begin_norm_axis on
and scales by gamma / shifts by beta (shaped like the axes from begin_params_axis on); it also returns the mean
and variance, with the normalised axes kept as size 1.
"""
import tensorflow.compat.v1 as tf

_FAST_GELU_SLOPE = 1.702
_DEFAULT_EPSILON = 0.0000001


def fast_gelu(features, name=None):
    """x * sigmoid(1.702 x) in the kernel's overflow-free form."""
    with tf.name_scope(name, "FastGelu", [features]):
        x = tf.convert_to_tensor(features, name="features")
        magnitude = tf.abs(x)
        return x / (1.0 + tf.exp(-_FAST_GELU_SLOPE * magnitude)) * tf.exp(0.5 * _FAST_GELU_SLOPE * (x - magnitude))


def fast_gelu_v2(features, name=None):
    """FastGeluV2: the same function (the NPU evaluates it with a cheaper polynomial; the values agree closely)."""
    return fast_gelu(features, name=name or "FastGeluV2")


def fast_gelu_grad(gradients, features, name=None):
    """gradients * d/dx [x * sigmoid(1.702 x)]."""
    with tf.name_scope(name, "FastGeluGrad", [gradients, features]):
        x = tf.convert_to_tensor(features, name="features")
        dy = tf.convert_to_tensor(gradients, x.dtype.base_dtype, name="gradients")
        magnitude = tf.abs(x)
        decay = tf.exp(-_FAST_GELU_SLOPE * magnitude)
        numerator = decay + _FAST_GELU_SLOPE * x * decay + tf.exp(_FAST_GELU_SLOPE * (x - magnitude))
        return dy * numerator / tf.square(decay + 1.0)


def _axis(axis, rank, arg):
    if not -rank <= axis < rank:
        raise ValueError(f"FusedLayerNorm: {arg}={axis} is out of range for an input of rank {rank}")
    return axis % rank


def fused_layer_norm(x, gamma, beta, begin_norm_axis=0, begin_params_axis=0, epsilon=_DEFAULT_EPSILON, name=None):
    """(y, mean, variance): y = (x - mean) / sqrt(variance + epsilon) * gamma + beta."""
    with tf.name_scope(name, "FusedLayerNorm", [x, gamma, beta]):
        x = tf.convert_to_tensor(x, name="x")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("FusedLayerNorm: x must have a known rank")
        axes = list(range(_axis(begin_norm_axis, rank, "begin_norm_axis"), rank))
        _axis(begin_params_axis, rank, "begin_params_axis")
        mean, variance = tf.nn.moments(x, axes, keep_dims=True)
        y = (x - mean) * tf.rsqrt(variance + epsilon) * gamma + beta
        return y, mean, variance


def fused_layer_norm_grad(dy, x, variance, mean, gamma, name=None):
    """(pd_x, pd_gamma, pd_beta) of fused_layer_norm. The normalised axes are the trailing ones where mean has size
    1, gamma's rank gives the parameter axes, and the gradient op, which has no epsilon attribute, adds the forward
    op's default 1e-7 to the variance."""
    with tf.name_scope(name, "FusedLayerNormGrad", [dy, x, variance, mean, gamma]):
        x = tf.convert_to_tensor(x, name="x")
        mean = tf.convert_to_tensor(mean)
        gamma = tf.convert_to_tensor(gamma)
        rank = x.shape.ndims
        begin = rank
        while begin > 0 and mean.shape.dims[begin - 1].value == 1:
            begin -= 1
        norm_axes = list(range(begin, rank))
        param_axes = list(range(rank - gamma.shape.ndims))
        rstd = tf.rsqrt(variance + _DEFAULT_EPSILON)
        normalised = (x - mean) * rstd
        d_normalised = dy * gamma
        pd_x = rstd * (d_normalised - tf.reduce_mean(d_normalised, norm_axes, keepdims=True)
                       - normalised * tf.reduce_mean(d_normalised * normalised, norm_axes, keepdims=True))
        pd_gamma = tf.reduce_sum(dy * normalised, param_axes)
        pd_beta = tf.reduce_sum(dy, param_axes)
        return pd_x, pd_gamma, pd_beta
