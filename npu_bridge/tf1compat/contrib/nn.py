"""tf.contrib.nn: the contrib nn functions TensorFlow 2 moved into tf.nn, under TF 1.15's argument names."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


def conv1d_transpose(value=None, filter=None, output_shape=None, stride=None, padding="SAME",
                     data_format="NWC", name=None):
    """TF 1.15's contrib.nn.conv1d_transpose (value, filter, stride), which TF 2 has as tf.nn.conv1d_transpose."""
    return tf.nn.conv1d_transpose(value, filter, output_shape, stride, padding=padding, data_format=data_format,
                                  name=name)


__getattr__ = removed.module_getattr(__name__)
