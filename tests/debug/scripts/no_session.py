"""A script that runs no emulated NPU session (plain TensorFlow only): npu-debug must say so."""
import tensorflow as tf

print(tf.constant(1.0))
