"""tf.contrib.tpu on a CPU-only path: TPUEstimator with use_tpu=False runs as an Estimator.

Ported BERT-family scripts keep their TPUEstimator code and pass use_tpu=False. TF 1.15 then ran model_fn on the
CPU with params["batch_size"] set to the mode's batch size (train, eval or predict) and turned the returned
TPUEstimatorSpec into an EstimatorSpec: scaffold_fn called, eval_metrics' (metric_fn, tensors) called for the
eval_metric_ops. That is what this module does, on the Estimator `tf.compat.v1.estimator` provides when it is
called: where that Estimator has TF's own tpu module (TensorFlow 2.15) its TPUEstimator is used as it is, otherwise
(TensorFlow >= 2.16, npu_bridge's Estimator) the CPU path written here. use_tpu=True is an error: there is no TPU.
The TPU graph functions (CrossShardOptimizer, bfloat16_scope, core, rewrite, shard, ...) are tf.compat.v1.tpu's.
"""
import collections
import enum
import importlib

import tensorflow as tf

from npu_bridge.tf1compat.contrib import estimator_lookup, removed
from npu_bridge.tf1compat.estimator_paths import tensorflow_has_estimator

_TPU = tf.compat.v1.tpu
CrossShardOptimizer = _TPU.CrossShardOptimizer
core = _TPU.core
bfloat16_scope = _TPU.bfloat16_scope
batch_parallel = _TPU.batch_parallel
cross_replica_sum = _TPU.cross_replica_sum
initialize_system = _TPU.initialize_system
outside_compilation = _TPU.outside_compilation
replicate = _TPU.replicate
rewrite = _TPU.rewrite
shard = _TPU.shard
shutdown_system = _TPU.shutdown_system


def _estimator_module():
    return estimator_lookup.estimator_module("tpu.TPUEstimator")


def _own_tpu_module():
    """TensorFlow's own tf.compat.v1.estimator.tpu (TF 1.15's TPUEstimator, kept to TensorFlow 2.15), or None.
    (On later TensorFlow npu_bridge's tf.estimator.tpu is this module.)"""
    return _estimator_module().tpu if tensorflow_has_estimator() else None


class InputPipelineConfig(enum.IntEnum):
    """How a TPU input_fn is replicated (only the names matter on a CPU)."""
    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_TPU_CONFIG_FIELDS = {
    "iterations_per_loop": 2, "num_shards": None, "num_cores_per_replica": None,
    "per_host_input_for_training": True, "tpu_job_name": None, "initial_infeed_sleep_secs": None,
    "input_partition_dims": None, "eval_training_input_configuration": InputPipelineConfig.PER_HOST_V1,
    "experimental_host_call_every_n_steps": 1,
}


class TPUConfig(collections.namedtuple("TPUConfig", tuple(_TPU_CONFIG_FIELDS))):
    """TF 1.15's TPU settings, with its defaults (iterations_per_loop=2, ...); kept on RunConfig.tpu_config."""

    def __new__(cls, *args, **kwargs):
        own = _own_tpu_module()
        if own is not None:
            return own.TPUConfig(*args, **kwargs)
        return super().__new__(cls, **{**_TPU_CONFIG_FIELDS, **dict(zip(cls._fields, args)), **kwargs})


_run_config_classes = {}


class RunConfig:
    """tf.contrib.tpu.RunConfig: the Estimator's RunConfig with `tpu_config` and `cluster` kept (the masters
    name TPU workers, which a CPU-only run has none of)."""

    def __new__(cls, tpu_config=None, evaluation_master=None, master=None, cluster=None, **kwargs):
        own = _own_tpu_module()
        if own is not None:
            return own.RunConfig(tpu_config=tpu_config, evaluation_master=evaluation_master, master=master,
                                 cluster=cluster, **kwargs)
        base = _estimator_module().RunConfig
        config_class = _run_config_classes.get(base)
        if config_class is None:
            config_class = _run_config_classes[base] = type("RunConfig", (base,), {"__module__": __name__})
        config = config_class(**kwargs)
        config.tpu_config = tpu_config or TPUConfig()
        config.cluster = cluster
        return config


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", (
        "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs", "scaffold_fn", "host_call",
        "training_hooks", "evaluation_hooks", "prediction_hooks"))):
    """What a TPUEstimator model_fn returns; as_estimator_spec() is the EstimatorSpec it stands for on a CPU."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None, export_outputs=None,
                scaffold_fn=None, host_call=None, training_hooks=None, evaluation_hooks=None,
                prediction_hooks=None):
        own = _own_tpu_module()
        if own is not None:
            return own.TPUEstimatorSpec(mode, predictions, loss, train_op, eval_metrics, export_outputs,
                                        scaffold_fn, host_call, training_hooks, evaluation_hooks, prediction_hooks)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics, export_outputs, scaffold_fn,
                               host_call, training_hooks, evaluation_hooks, prediction_hooks)

    def as_estimator_spec(self):
        """The EstimatorSpec TF 1.15 ran on a CPU: eval_metrics and host_call computed on the host, scaffold_fn
        called."""
        return _estimator_module().EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss, train_op=self.train_op,
            eval_metric_ops=_call_on_host(self.eval_metrics), export_outputs=self.export_outputs,
            scaffold=self.scaffold_fn() if self.scaffold_fn else None,
            training_hooks=self.training_hooks, evaluation_hooks=self.evaluation_hooks,
            prediction_hooks=self.prediction_hooks)


def _call_on_host(function_and_tensors):
    """metric_fn(*tensors) or metric_fn(**tensors) for an (metric_fn, tensors) pair; None for None."""
    if function_and_tensors is None:
        return None
    function, tensors = function_and_tensors
    return function(**tensors) if isinstance(tensors, dict) else function(*tensors)


class TPUEstimator:
    """tf.contrib.tpu.TPUEstimator(model_fn, ..., use_tpu=False, train_batch_size=..., ...) as an Estimator; see
    the module docstring."""

    def __new__(cls, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True, train_batch_size=None,
                eval_batch_size=None, predict_batch_size=None, batch_axis=None, eval_on_tpu=True,
                export_to_tpu=True, export_to_cpu=True, warm_start_from=None, **tpu_only_options):
        if use_tpu:
            raise ValueError("TPUEstimator(use_tpu=True): this machine has no TPU; ported scripts pass "
                             "use_tpu=False (the --use_tpu flag) to run the model on the host")
        own = _own_tpu_module()
        if own is not None:
            return own.TPUEstimator(
                model_fn=model_fn, model_dir=model_dir, config=config, params=params, use_tpu=False,
                train_batch_size=train_batch_size, eval_batch_size=eval_batch_size,
                predict_batch_size=predict_batch_size, batch_axis=batch_axis, eval_on_tpu=eval_on_tpu,
                export_to_tpu=export_to_tpu, export_to_cpu=export_to_cpu, warm_start_from=warm_start_from,
                **tpu_only_options)
        batch_sizes = {"train": train_batch_size, "eval": eval_batch_size, "infer": predict_batch_size}
        return importlib.import_module(f"{__name__}.cpu_estimator").build(
            _estimator_module(), model_fn, model_dir, config, params, batch_sizes, warm_start_from)


_missing = removed.module_getattr(__name__)
removed.keep_module_paths(__name__, ("proto",))


def __getattr__(name):
    if name == "proto":     # TensorFlow's tensorflow.core.protobuf.tpu (tf1compat.ALIASES), its _pb2 modules by name
        return removed.ModulePath("tensorflow.contrib.tpu.proto")
    return _missing(name)
