"""Unary ops with NPU kernels.

`gelu` matches the NPU's Gelu kernel, which uses the tanh approximation
0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))), not the exact erf form.
"""
import tensorflow.compat.v2 as tf2


def gelu(x, name=None):
    """GELU with the tanh approximation, as the NPU computes it."""
    return tf2.nn.gelu(x, approximate=True, name=name or "Gelu")
