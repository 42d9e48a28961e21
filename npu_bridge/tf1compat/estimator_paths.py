"""Where tf.estimator comes from on TensorFlow >= 2.16, which removed it: npu_bridge.tf1compat.estimator, under
every name ported scripts reach it by. On 2.15 and earlier TensorFlow's own Estimator is left alone."""
import importlib
import sys

ESTIMATOR_PACKAGE = "npu_bridge.tf1compat.estimator"
# Longer names first: the alias finder takes the first key that covers a name.
ESTIMATOR_ALIASES = {
    **dict.fromkeys(("tensorflow.python.estimator", "tensorflow_estimator.python.estimator",
                     "tensorflow_estimator.estimator", "tensorflow.estimator", "tensorflow.compat.v1.estimator"),
                    ESTIMATOR_PACKAGE),
    "tensorflow_estimator": "npu_bridge.tf1compat.estimator_root",
}


def tensorflow_has_estimator():
    """Whether this TensorFlow ships tf.estimator (2.15 is the last that does); decided from the version, so the
    check does not load TensorFlow's lazily imported Estimator."""
    import tensorflow

    major, minor = (int(part) for part in tensorflow.__version__.split(".")[:2])
    return (major, minor) <= (2, 15)


def missing_module(fullname):
    """The error for an Estimator module path our package does not have (TensorFlow >= 2.16)."""
    return ModuleNotFoundError(
        f"No module named {fullname!r}: TensorFlow 2.16 removed tf.estimator, and npu_bridge's Estimator "
        f"({ESTIMATOR_PACKAGE}) has Estimator, RunConfig, EstimatorSpec, ModeKeys, train_and_evaluate and the "
        "export functions, but not the canned estimators and heads (DNNClassifier, LinearRegressor, "
        "DNNLinearCombinedClassifier, ...) nor tf.estimator's private modules: write a model_fn for "
        "tf.estimator.Estimator, or run on TensorFlow 2.15, which still has them", name=fullname)


def install(aliases, missing):
    """On TensorFlow without tf.estimator: add the Estimator module names to `aliases` (and their error to
    `missing`) and make our package `tf.estimator` and `tf.compat.v1.estimator` (the package loads its names on
    first use)."""
    if tensorflow_has_estimator():
        return
    import tensorflow

    aliases.update(ESTIMATOR_ALIASES)
    missing.update(dict.fromkeys((f"{name}." for name in ESTIMATOR_ALIASES), missing_module))
    package = importlib.import_module(ESTIMATOR_PACKAGE)
    # The v1 API is several module objects: `tensorflow.compat.v1` imported by name (`import tensorflow.compat.v1
    # as tf`), the module it wraps, and whichever of them the attribute tensorflow.compat.v1 holds; and the v1 API
    # again under its own compat.v1 (DIN's `tf.compat.v1.compat.v1.estimator`, where tf is already v1). All get it.
    importlib.import_module("tensorflow.compat.v1")
    v1_modules = [sys.modules.get(name) for name in ("tensorflow.compat.v1", "tensorflow._api.v2.compat.v1",
                                                     "tensorflow._api.v2.compat.v1.compat.v1")]
    for module in (tensorflow, tensorflow.compat.v1, tensorflow.compat.v1.compat.v1, *filter(None, v1_modules)):
        module.estimator = package
