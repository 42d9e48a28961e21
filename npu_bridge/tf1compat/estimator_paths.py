"""Where tf.estimator comes from on TensorFlow >= 2.16, which removed it: npu_bridge.tf1compat.estimator, under
every name ported scripts reach it by. On 2.15 and earlier TensorFlow's own Estimator is left alone."""
import importlib

ESTIMATOR_PACKAGE = "npu_bridge.tf1compat.estimator"
ESTIMATOR_ALIASES = dict.fromkeys(("tensorflow.python.estimator", "tensorflow_estimator.python.estimator",
                                   "tensorflow.estimator", "tensorflow.compat.v1.estimator"), ESTIMATOR_PACKAGE)


def tensorflow_has_estimator():
    """Whether this TensorFlow ships tf.estimator (2.15 is the last that does); decided from the version, so the
    check does not load TensorFlow's lazily imported Estimator."""
    import tensorflow

    major, minor = (int(part) for part in tensorflow.__version__.split(".")[:2])
    return (major, minor) <= (2, 15)


def install(aliases):
    """On TensorFlow without tf.estimator: add the Estimator module names to `aliases` and make our package
    `tf.estimator` and `tf.compat.v1.estimator` (the package loads its names on first use)."""
    if tensorflow_has_estimator():
        return
    import tensorflow

    aliases.update(ESTIMATOR_ALIASES)
    package = importlib.import_module(ESTIMATOR_PACKAGE)
    # `tensorflow.compat.v1` reached as an attribute and imported by name (`import tensorflow.compat.v1 as tf`)
    # are two module objects: both get the attribute.
    for module in (tensorflow, tensorflow.compat.v1, importlib.import_module("tensorflow.compat.v1")):
        module.estimator = package
