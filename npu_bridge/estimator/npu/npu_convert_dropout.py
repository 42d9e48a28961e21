"""`from npu_bridge.estimator.npu import npu_convert_dropout`: imported for its effect, Keras Dropout as the NPU's.

As in the real adapter, importing this module replaces Keras Dropout's call so that in training a Dropout layer
without a noise_shape runs npu_ops.dropout (keep_prob = 1 - rate), and one with a noise_shape runs tf.nn.dropout;
outside training it passes its input through. The Keras patched is the Keras 2 that tf.keras and tf.layers use
under npu-run (tf_keras on TensorFlow >= 2.16, keras 2 on 2.15); tf.layers.Dropout / tf.layers.dropout inherit it.
"""
import importlib.util

import tensorflow.compat.v1 as tf

from npu_bridge import tf_private
from npu_bridge.estimator import npu_ops


def _keras2():
    """tf.keras when it is Keras 2, else tf_keras (what tf.layers and npu-run's tf.keras use on TF >= 2.16)."""
    if tf_private.is_keras2_dropout(tf.keras.layers.Dropout):
        return tf.keras
    if importlib.util.find_spec("tf_keras") is not None:
        import tf_keras

        return tf_keras
    raise ImportError("npu_convert_dropout: tf.keras is Keras 3, whose Dropout the NPU adapter never converted, and "
                      "tf_keras (Keras 2) is not installed; install tf_keras and run the script under npu-run")


_KERAS = _keras2()


def dropout_call(self, inputs, training=None):
    """Keras Dropout.call on the NPU: npu_ops.dropout in training, identity otherwise."""
    if training is None:
        training = _KERAS.backend.learning_phase()
    noise_shape = self._get_noise_shape(inputs)

    def dropped_inputs():
        if noise_shape is not None:
            return tf.nn.dropout(inputs, noise_shape=noise_shape, seed=self.seed, rate=self.rate)
        return npu_ops.dropout(inputs, noise_shape=noise_shape, seed=self.seed, keep_prob=1.0 - self.rate)

    if isinstance(training, (bool, int)):
        return dropped_inputs() if training else tf.identity(inputs)
    return tf.cond(tf.cast(training, tf.bool), dropped_inputs, lambda: tf.identity(inputs))


_KERAS.layers.Dropout.call = dropout_call
