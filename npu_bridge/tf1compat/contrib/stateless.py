"""tf.contrib.stateless: TF 1.15's stateless random ops, which TensorFlow keeps under tf.random (the same kernels, so
the same numbers for the same seed)."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

stateless_random_uniform = tf.random.stateless_uniform
stateless_random_normal = tf.random.stateless_normal
stateless_truncated_normal = tf.random.stateless_truncated_normal
stateless_multinomial = tf.compat.v1.random.stateless_multinomial

__getattr__ = removed.module_getattr(__name__)
