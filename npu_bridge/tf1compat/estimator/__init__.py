"""tf.estimator for TensorFlow >= 2.16, which removed it: this project's own Estimator on MonitoredTrainingSession.

tf1compat.install() makes it `tf.estimator`, `tf.compat.v1.estimator`, `tensorflow.python.estimator` and
`tensorflow_estimator.python.estimator` when TensorFlow has no Estimator of its own (on 2.15 TensorFlow's stays).
Names load on first use, so installing costs nothing for scripts that never touch an Estimator. The hooks are
tf.compat.v1.train's own; `tpu` (TPUEstimator with use_tpu=False) is tf.contrib.tpu's.
"""
import importlib

# public name -> the submodule defining it; "tf.train" names come from tf.compat.v1.train
_NAMES = {
    "Estimator": "estimator", "RunConfig": "run_config", "EstimatorSpec": "model_fn", "ModeKeys": "mode_keys",
    "TrainSpec": "training", "EvalSpec": "training", "train_and_evaluate": "training",
    "WarmStartSettings": "warm_starting", "VocabInfo": "warm_starting",
    "Exporter": "exporter", "FinalExporter": "exporter", "LatestExporter": "exporter",
    **dict.fromkeys((
        "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "CheckpointSaverHook",
        "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook",
        "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "SecondOrStepTimer", "StepCounterHook",
        "StopAtStepHook", "SummarySaverHook"), "tf.train"),
}
_SUBMODULES = ("estimator", "run_config", "model_fn", "mode_keys", "training", "warm_starting", "export", "inputs",
               "exporter")


def __getattr__(name):
    if name == "tpu":       # TPUEstimator with use_tpu=False, as tf.contrib.tpu has it
        return importlib.import_module("npu_bridge.tf1compat.contrib.tpu")
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    source = _NAMES.get(name)
    if source is None:
        raise AttributeError(f"module 'tf.estimator' (npu_bridge's, for TensorFlow >= 2.16) has no attribute "
                             f"{name!r}")
    if source == "tf.train":
        import tensorflow.compat.v1 as tf

        value = getattr(tf.train, name)
    else:
        value = getattr(importlib.import_module(f"{__name__}.{source}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_NAMES, *_SUBMODULES, "tpu"})
