"""tf.contrib.ctc: TF 0.x's home of the CTC ops, which Keras 1 backends still import when tensorflow.python.ops.ctc_ops
is missing; they are TensorFlow's tf.compat.v1.nn CTC functions (the same ops and arguments)."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

ctc_loss = tf.compat.v1.nn.ctc_loss
ctc_greedy_decoder = tf.compat.v1.nn.ctc_greedy_decoder
ctc_beam_search_decoder = tf.compat.v1.nn.ctc_beam_search_decoder

__getattr__ = removed.module_getattr(__name__)
