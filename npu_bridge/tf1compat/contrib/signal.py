"""tf.contrib.signal: TF 1.15 had already moved it to tf.signal; it is TensorFlow's tf.signal (the same functions:
stft, linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms, frame, ...)."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(tf.signal, name)
    except AttributeError:
        raise removed.error(f"contrib.signal.{name}") from None
