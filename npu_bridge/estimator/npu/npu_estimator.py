"""NPUEstimator and NPUEstimatorSpec, on TensorFlow's Estimator up to 2.15 and on npu_bridge's own after.

NPUEstimator is a tf.estimator.Estimator that insists on an NPURunConfig (whose session_config carries the
NpuOptimizer options, so every session the Estimator opens is emulated) and converts NPUEstimatorSpec results
of the model_fn. With iterations_per_loop > 1 the training op becomes an IterationOp, so one session run
executes that many steps, as on the NPU.
"""
import inspect

import tensorflow.compat.v1 as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.ops import summary_ops_v2

from npu_bridge import tf_private
from npu_bridge.estimator.npu.estimator_support import ESTIMATOR
from npu_bridge.estimator.npu.npu_config import NPURunConfig
from npu_bridge.core.contract import ITERATIONS_PER_LOOP_ATTR


class NPUEstimatorSpec(ESTIMATOR.EstimatorSpec):
    """EstimatorSpec returned by NPU model_fns: tf.estimator.EstimatorSpec's fields plus `host_call`.

    host_call: (fn, tensors) as in TPUEstimatorSpec: on the NPU fn runs on the host with the step's `tensors` (a list,
    or a dict passed as keywords), typically to write summaries. Everything runs on the host here, so NPUEstimator
    groups the ops fn returns with the train op: they run on every training step.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None, host_call=None):
        if host_call is not None and not (isinstance(host_call, (tuple, list)) and len(host_call) == 2 and
                                          callable(host_call[0]) and isinstance(host_call[1], (list, tuple, dict))):
            raise ValueError(f"NPUEstimatorSpec: host_call must be (fn, list or dict of tensors), got {host_call!r}")
        spec = super().__new__(cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
                               eval_metric_ops=eval_metric_ops, export_outputs=export_outputs,
                               training_chief_hooks=training_chief_hooks, training_hooks=training_hooks,
                               scaffold=scaffold, evaluation_hooks=evaluation_hooks,
                               prediction_hooks=prediction_hooks)
        spec.host_call = host_call
        return spec


class _HostCallWritersHook(tf.train.SessionRunHook):
    """Opens the summary writers a host_call made once the session exists and flushes them at the end, as the
    real adapter's host-call hook does (without it the first step fails: the writer resource does not exist)."""

    def begin(self):
        self._init_ops = summary_ops_v2.summary_writer_initializer_op()
        self._flush_ops = [tf.raw_ops.FlushSummaryWriter(writer=op.inputs[0]) for op in self._init_ops]

    def after_create_session(self, session, coord):
        session.run(self._init_ops)

    def end(self, session):
        session.run(self._flush_ops)


def _with_host_call(spec):
    """The spec with the ops of its host_call grouped into its train op (run on every training step), and a hook
    for the summary writers it made."""
    fn, tensors = spec.host_call
    outputs = fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)
    outputs = [] if outputs is None else outputs if isinstance(outputs, (list, tuple)) else [outputs]
    hooks = [*(spec.training_hooks or ()), _HostCallWritersHook()]
    return spec._replace(train_op=tf.group(spec.train_op, *outputs), training_hooks=hooks)


def _loop_train_op(spec, iterations_per_loop):
    """The spec with its train_op wrapped in an IterationOp that runs `iterations_per_loop` steps per run."""
    with tf.control_dependencies([spec.train_op]):
        iteration_op = tf.group(spec.train_op, name="IterationOp")
    tf_private.set_attr(iteration_op, ITERATIONS_PER_LOOP_ATTR, attr_value_pb2.AttrValue(i=iterations_per_loop))
    return spec._replace(train_op=iteration_op)


class NPUEstimator(ESTIMATOR.Estimator):
    """tf.estimator.Estimator whose sessions run on the emulated NPU; `config` must be an NPURunConfig."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, job_start_file="",
                 warm_start_from=None):
        if not isinstance(config, NPURunConfig):
            raise ValueError(f"NPUEstimator: config must be an NPURunConfig, got {type(config).__name__}")
        iterations_per_loop = config.iterations_per_loop

        accepted = inspect.signature(model_fn).parameters

        def call_model_fn(offered):
            spec = model_fn(**{name: value for name, value in offered.items() if name in accepted})
            if offered["mode"] == ESTIMATOR.ModeKeys.TRAIN and getattr(spec, "host_call", None) is not None:
                spec = _with_host_call(spec)
            if offered["mode"] == ESTIMATOR.ModeKeys.TRAIN and iterations_per_loop > 1:
                spec = _loop_train_op(spec, iterations_per_loop)
            return spec

        # The Estimator passes `params` only to a model_fn that names it (and warns when it is named but empty).
        if "params" in accepted:
            def npu_model_fn(features, labels, mode, params, config):
                return call_model_fn(dict(features=features, labels=labels, mode=mode, params=params,
                                          config=config))
        else:
            def npu_model_fn(features, labels, mode, config):
                return call_model_fn(dict(features=features, labels=labels, mode=mode, config=config))

        super().__init__(model_fn=npu_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)
