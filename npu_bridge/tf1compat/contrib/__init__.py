"""`tensorflow.contrib` / `tf.contrib` as TF 1.15 had it, for the symbols ported scripts use.

Each submodule mirrors the tf.contrib module of the same name. A name TF 1.15's contrib had but this package does
not provide is an AttributeError or ImportError naming the symbol, never a bare "no attribute 'contrib'".
"""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"tf.contrib.{name} is not provided by npu_bridge's TF 1.15 compatibility layer; tf.contrib was removed in "
        "TensorFlow 2.0: use its TensorFlow 2 replacement")
