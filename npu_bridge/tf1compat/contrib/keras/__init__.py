"""tf.contrib.keras: TF 1.15 kept Keras here too; it is tf.compat.v1.keras (the same classes).

A package, so that older deep paths (`tensorflow.contrib.keras.python.keras.layers`, gone before TF 1.15) reach the
import finder and get the contrib error naming them, rather than Python's "is not a package"."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(tf.compat.v1.keras, name)
    except AttributeError:
        raise removed.error(f"contrib.keras.{name}") from None
