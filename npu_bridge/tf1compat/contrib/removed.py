"""The one error for a tf.contrib name this package does not provide: the symbol, and what TensorFlow 2 has instead.

tf.contrib had hundreds of modules; the package provides every symbol two or more ported ModelZoo training folders
use. Anything else stops the script at its first use with ContribRemovedError naming the full symbol and its TF 2
replacement from REPLACEMENTS (the most specific entry that matches). It is an ImportError, so `from
tensorflow.contrib.x import y` shows this message rather than Python's bare "cannot import name", and scripts that
probe with `try: ... except ImportError` take their fallback.
"""
import importlib
import importlib.util
import sys
import types

# TPUEstimator's internals (tensorflow.python.tpu.error_handling, ...), which TensorFlow 2.16 dropped with tf.estimator
_TPU_ESTIMATOR_INTERNALS = ("tf.contrib.tpu.TPUEstimator with use_tpu=False (its CPU path needs none of TPUEstimator's "
                            "internals, which TensorFlow 2.16 dropped with tf.estimator; on TensorFlow 2.15 this path "
                            "resolves)")

# symbol (as a script spells it after `tf.`) -> its TF 2 replacement; a module entry covers the names inside it
REPLACEMENTS = {
    "contrib.RunConfig": "tf.estimator.RunConfig (TF 1.15 had it as tf.contrib.learn.RunConfig, not at the top of "
                         "tf.contrib)",
    "contrib._warning": "Python's warnings module (_warning was private to TF 1.15's contrib package)",
    "contrib.bigtable": "the google-cloud-bigtable client",
    "contrib.cloud": "the google-cloud client libraries",
    "contrib.cloud.BigtableClient": "the google-cloud-bigtable client, reading the rows into a tf.data pipeline",
    "contrib.compiler": "tf.function(jit_compile=True) (XLA); NPU graphs are compiled whole, nothing to mark",
    "contrib.cudnn_rnn": "tf.contrib.rnn.BasicRNNCell with tf.compat.v1.nn.dynamic_rnn for the tanh / relu RNN "
                         "layers; CudnnLSTM / CudnnGRU need no saveable here (their variables carry the canonical "
                         "names)",
    "contrib.deprecated": "tf.compat.v1.summary.scalar / histogram / image / audio / merge_all (what "
                          "contrib.deprecated's *_summary functions became)",
    "contrib.distribute": "tf.distribute (its strategies under their TF 2 names; tf.distribute.Strategy is the base "
                          "class)",
    "contrib.distribute.CollectiveAllReduceStrategy": "tf.distribute.MultiWorkerMirroredStrategy",
    "contrib.distribution_strategy_context": "tf.distribute.get_replica_context / get_cross_replica_context / "
                                             "in_cross_replica_context (get_tower_context is get_replica_context)",
    "contrib.distributions": "tensorflow_probability.distributions (the same distributions)",
    "contrib.eager": "TensorFlow 2's eager execution (tf.function, tf.GradientTape)",
    "contrib.estimator": "tf.estimator (heads: tf.estimator.MultiLabelHead, ...; export_all_saved_models: "
                         "Estimator.export_saved_model; replicate_model_fn / TowerOptimizer: "
                         "tf.estimator.RunConfig(train_distribute=tf.distribute.MirroredStrategy()); "
                         "SavedModelEstimator: tf.saved_model.load)",
    "contrib.ffmpeg": "tf.audio.decode_wav or an external decoder",
    "contrib.filter_variables": "tf.contrib.framework.filter_variables (TF 1.15 had it there, not at the top of "
                                "tf.contrib)",
    "contrib.gan": "the tensorflow_gan package",
    "contrib.graph_editor": "editing the GraphDef (tf.compat.v1.get_default_graph().as_graph_def()) and importing "
                            "it with tf.import_graph_def",
    "contrib.integrate": "tensorflow_probability.math.ode (odeint: tfp.math.ode.DormandPrince().solve)",
    "contrib.keras": "tf.compat.v1.keras",
    "contrib.kfac": "the kfac package",
    "contrib.labeled_tensor": "plain tensors",
    "contrib.layer": "tf.contrib.layers (TF 1.15 had no tf.contrib.layer: a misspelling)",
    "contrib.learn": "tf.estimator (Estimator, RunConfig, ModeKeys; Experiment / learn_runner: "
                     "tf.estimator.train_and_evaluate; monitors: tf.estimator.SessionRunHook; export strategies: "
                     "Estimator.export_saved_model)",
    "contrib.learn.python.learn.datasets": "tf.keras.datasets, or tensorflow.examples.tutorials.mnist.input_data "
                                           "for the MNIST files",
    "contrib.legacy_seq2seq": "tensorflow_addons.seq2seq, or tf.compat.v1.nn.dynamic_rnn with your own decoder",
    "contrib.lite": "tf.lite",
    "contrib.losses.metric_learning": "tf_slim.losses.metric_learning / tensorflow_addons.losses",
    "contrib.memory_stats": "tf.config.experimental.get_memory_info",
    "contrib.metrics.confusion_matrix": "tf.math.confusion_matrix",
    "contrib.model_pruning": "tensorflow_model_optimization.sparsity",
    "contrib.nccl": "tf.distribute.NcclAllReduce (GPU only; across NPUs, npu_bridge.hccl's allreduce)",
    "contrib.predictor": "tf.saved_model.load",
    "contrib.quantize": "tensorflow_model_optimization.quantization (quantization-aware training)",
    "contrib.recurrent": "tf.compat.v1.nn.dynamic_rnn / tf.compat.v1.nn.bidirectional_dynamic_rnn (or tf.while_loop "
                         "for Recurrent)",
    "contrib.rnn.GRUBlockCellV2": "tf.contrib.rnn.GRUBlockCell or tf.compat.v1.nn.rnn_cell.GRUCell",
    "contrib.rnn.LSTMBlockFusedCell": "tf.contrib.rnn.LSTMBlockCell with tf.compat.v1.nn.dynamic_rnn (or "
                                      "tf.keras.layers.LSTM)",
    "contrib.rnn.OutputProjectionWrapper": "a tf.compat.v1.layers.dense projection of the cell's outputs",
    "contrib.rnn.ops": "the fused RNN kernels TensorFlow 2 still registers under tf.raw_ops (GRUBlockCell, "
                       "BlockLSTMV2, ...)",
    "contrib.seq2seq": "tensorflow_addons.seq2seq (decoders, helpers, attention, beam search)",
    "contrib.slim.nets.cyclegan": "the cyclegan module of tensorflow/models research/slim/nets (TF 1.15's "
                                  "contrib.slim.nets had no cyclegan either)",
    "contrib.tensor_forest": "tensorflow_decision_forests",
    "contrib.tensorboard": "the tensorboard package's tensorboard.plugins.projector (ProjectorConfig, "
                           "visualize_embeddings)",
    "contrib.tensorrt": "tf.experimental.tensorrt (GPU only)",
    "contrib.tfprof": "tf.compat.v1.profiler (profile, ProfileOptionBuilder; tf.compat.v1.profiler.Profiler "
                      "for per-step session traces)",
    "contrib.timeseries": "tf.keras sequence models",
    "contrib.tpu.AsyncCheckpointSaverHook": "tf.compat.v1.train.CheckpointSaverHook (the same arguments, synchronous)",
    "contrib.tpu.python.ops": "tf.compat.v1.tpu (TPU-only ops; on a CPU keep use_tpu=False)",
    "contrib.tpu.python.tpu.error_handling": _TPU_ESTIMATOR_INTERNALS,
    "contrib.tpu.python.tpu.session_support": _TPU_ESTIMATOR_INTERNALS,
    "contrib.tpu.python.tpu.tpu_context": _TPU_ESTIMATOR_INTERNALS,
    "contrib.tpu.python.tpu.util": _TPU_ESTIMATOR_INTERNALS,
    "contrib.training": "a tf.data pipeline (SequenceQueueingStateSaver / batch_sequences_with_states have no TF 2 "
                        "counterpart: keep an RNN's state in variables between steps)",
    "contrib.training.bucket_by_sequence_length": "tf.data.experimental.bucket_by_sequence_length on a dataset",
    "contrib.util.loader": "tf.load_op_library (a custom op library built for TF 1.15 must be rebuilt against "
                           "this TensorFlow)",
}


class ContribRemovedError(ImportError):
    """A tf.contrib symbol that TensorFlow 2 removed and this compatibility layer does not provide."""


def replacement(symbol):
    """The TF 2 replacement text for `symbol` ("contrib.x.y"), from its most specific REPLACEMENTS entry."""
    parts = symbol.split(".")
    for length in range(len(parts), 1, -1):
        found = REPLACEMENTS.get(".".join(parts[:length]))
        if found is not None:
            return found
    return "its TensorFlow 2 counterpart under tf.compat.v1, tf.data, tf.keras or tf.nn (tf_upgrade_v2 names it)"


def error(symbol):
    """The error for `symbol` ("contrib.x.y"), naming it and its replacement."""
    return ContribRemovedError(
        f"tf.{symbol} is not provided: tf.contrib was removed in TensorFlow 2.0 and npu_bridge's TF 1.15 "
        f"compatibility layer covers only the contrib symbols ported scripts commonly use. Use "
        f"{replacement(symbol)} instead.")


def missing_module(module_name):
    """The error for `import tensorflow.contrib.x.y` when no module provides it."""
    return error(module_name[len("tensorflow."):])


def module_getattr(module_name, symbol_prefix=None):
    """A module-level __getattr__ for a contrib module: a submodule not imported yet is imported (`from package
    import submodule` asks this first), any other missing public name raises error(); dunder probes (copy,
    pickle, inspect) get the AttributeError they expect. `symbol_prefix` is the contrib spelling of a module that
    is not ours (tf_slim.nets is "contrib.slim.nets"), so the error names what the script wrote."""
    prefix = symbol_prefix or module_name.replace("npu_bridge.tf1compat.", "", 1)

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            found = importlib.util.find_spec(f"{module_name}.{name}")
        except ModuleNotFoundError:     # module_name is a module, not a package
            found = None
        if found is not None:
            return importlib.import_module(f"{module_name}.{name}")
        raise error(f"{prefix}.{name}")

    return __getattr__


class ModulePath(types.ModuleType):
    """A TF 1.15 package path, reached by attributes, whose modules are another package's under other names:
    Huawei's `tensorflow.contrib.offline_train.python.npu` is npu_bridge.estimator.npu, `tensorflow.contrib.tpu.proto`
    is tensorflow.core.protobuf.tpu. TF 1.15's package had imported its submodules, so
    `tf.contrib.offline_train.python.npu.npu_config.NPURunConfig` named the class; the module aliased has no
    `python` attribute, nor its submodules before they are imported. Each attribute is the aliased module's own, or
    the submodule imported by its TF 1.15 name (a package again as a ModulePath, a module as itself), or error()."""

    def __init__(self, name):
        super().__init__(name)
        self._module = importlib.import_module(name)

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        value = getattr(self._module, attribute, None)
        if value is not None and not isinstance(value, types.ModuleType):
            return value
        name = f"{self.__name__}.{attribute}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if value is not None:       # a module the aliased module imported, not one of its submodules
                return value
            if exc.name != name:
                raise
            raise error(name[len("tensorflow."):]) from None
        return ModulePath(name) if hasattr(module, "__path__") else module

    def __dir__(self):
        return dir(self._module)


class _KeepsModulePaths(types.ModuleType):
    """A contrib module whose attributes in `_MODULE_PATHS` stay ModulePaths: importing `tensorflow.contrib.tpu.proto`
    by name makes the import system bind the aliased module (tensorflow.core.protobuf.tpu) as the attribute, which
    would end the attribute chains a ModulePath keeps working."""

    def __setattr__(self, name, value):
        if name not in self.__dict__.get("_MODULE_PATHS", ()):
            super().__setattr__(name, value)


def keep_module_paths(module_name, names):
    """Keep attributes `names` of module `module_name` (a contrib package whose __getattr__ answers them with
    ModulePaths) unbound, however the script imported them."""
    module = sys.modules[module_name]
    module._MODULE_PATHS = frozenset(names)
    module.__class__ = _KeepsModulePaths
