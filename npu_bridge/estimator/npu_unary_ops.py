"""`from npu_bridge.estimator.npu_unary_ops import npu_unary_ops`: the NPU's Gelu and GeluGrad ops.

In the real package `npu_unary_ops` is the generated op module of the adapter's library, so scripts call
`npu_unary_ops.gelu(x)` and, in hand-written gradients, `npu_unary_ops.gelu_grad(dy, x, y)`. Both follow the
NPU's Gelu kernel, which uses the tanh approximation 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))),
not the exact erf form.
"""
import math
import types

import tensorflow.compat.v1 as tf

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_CUBIC = 0.044715


def gelu(x, name=None):
    """GELU with the tanh approximation, as the NPU computes it.

    Built from Mul, Add and Tanh, which are gray like the NPU's Gelu op, so the whole function follows its input's
    dtype as the one op does; tf.nn.gelu cubes with Pow, which is black on the 910 and would keep it in float32.
    """
    with tf.name_scope(name, "Gelu", [x]):
        x = tf.convert_to_tensor(x)
        inner = _SQRT_2_OVER_PI * (x + _CUBIC * x * x * x)
        return 0.5 * x * (1.0 + tf.tanh(inner))


def gelu_grad(dy, x, y, name=None):
    """The gradient of `gelu` at `x`, times `dy` (`y` = gelu(x) is an input of the NPU kernel; the value does
    not need it)."""
    with tf.name_scope(name, "GeluGrad", [dy, x, y]):
        x = tf.convert_to_tensor(x)
        dy = tf.convert_to_tensor(dy, dtype=x.dtype)
        inner = _SQRT_2_OVER_PI * (x + _CUBIC * x * x * x)
        tanh = tf.tanh(inner)
        slope = 0.5 * (1.0 + tanh) + 0.5 * x * (1.0 - tanh * tanh) * _SQRT_2_OVER_PI * (1.0 + 3.0 * _CUBIC * x * x)
        return dy * slope


npu_unary_ops = types.SimpleNamespace(gelu=gelu, gelu_grad=gelu_grad)
