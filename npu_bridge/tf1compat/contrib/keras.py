"""tf.contrib.keras: TF 1.15 kept Keras here too; it is tf.compat.v1.keras (the same classes)."""
import tensorflow as tf


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(tf.compat.v1.keras, name)
