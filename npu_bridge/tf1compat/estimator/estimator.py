"""Estimator written on tf.compat.v1.train.MonitoredTrainingSession, for TensorFlow >= 2.16 (which removed
tf.estimator): train / evaluate / predict / export_saved_model, each in a fresh graph, as TF 1.15's Estimator.

model_dir is the Estimator's memory: train restores the latest checkpoint there and continues its global step,
evaluate and predict read the latest checkpoint (or run on freshly initialized variables when there is none, with a
log line saying so), and checkpoints, the graph and summaries are written there.
"""
import copy
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

from npu_bridge.tf1compat.estimator import calls
from npu_bridge.tf1compat.estimator.mode_keys import ModeKeys
from npu_bridge.tf1compat.estimator.model_fn import LOSS_METRIC_KEY
from npu_bridge.tf1compat.estimator.run_config import RunConfig, get_default_session_config
from npu_bridge.tf1compat.estimator.warm_starting import WarmStartSettings, warm_start


class Estimator:
    """Trains, evaluates and predicts with the model `model_fn` builds; see the module docstring."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if not callable(model_fn):
            raise ValueError(f"Estimator: model_fn must be callable, got {model_fn!r}")
        calls.check_model_fn(model_fn, params)
        self._config = _resolved_config(config, model_dir)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = _warm_start_settings(warm_start_from)

    model_dir = property(lambda self: self._config.model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))

    @property
    def model_fn(self):
        """The model_fn, as a function of (features, labels, mode, config) that passes params itself."""
        def public_model_fn(features, labels, mode, config):
            return calls.call_model_fn(self._model_fn, features, labels, mode, self.params, config)
        return public_model_fn

    def latest_checkpoint(self):
        """The path of the newest checkpoint in model_dir, or None."""
        return tf.train.latest_checkpoint(self.model_dir)

    def get_variable_names(self):
        return [name for name, _ in tf.train.list_variables(self._checkpoint_or_error())]

    def get_variable_value(self, name):
        return tf.train.load_variable(self._checkpoint_or_error(), name)

    def _checkpoint_or_error(self):
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            raise ValueError(f"Estimator: no checkpoint in model_dir {self.model_dir!r}: train the model first")
        return checkpoint

    def _call_model_fn(self, features, labels, mode, config):
        return calls.call_model_fn(self._model_fn, features, labels, mode, self.params, config)

    def _new_graph(self):
        graph = tf.Graph()
        with graph.as_default():
            if self._config.tf_random_seed is not None:
                tf.set_random_seed(self._config.tf_random_seed)
        return graph

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Train for `steps` more steps, up to global step `max_steps`, or until input_fn's data runs out."""
        if steps is not None and max_steps is not None:
            raise ValueError("Estimator.train: steps and max_steps cannot both be given")
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and value <= 0:
                raise ValueError(f"Estimator.train: {name} must be > 0, got {value}")
        if max_steps is not None and _global_step_in(self.model_dir) >= max_steps:
            tf.logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _checked_hooks("hooks", hooks)
        saving_listeners = list(saving_listeners or ())
        with self._new_graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            features, labels, input_hooks = calls.features_and_labels(
                input_fn, ModeKeys.TRAIN, self.params, self.config)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            tf.summary.scalar("loss", spec.loss)
            if self._warm_start_settings is not None:
                warm_start(self._warm_start_settings)
            return self._train_with_spec(spec, global_step, hooks + input_hooks, steps, max_steps,
                                         saving_listeners)

    def _train_with_spec(self, spec, global_step, hooks, steps, max_steps, saving_listeners):
        config = self._config
        if not tf.get_collection(tf.GraphKeys.SAVERS) and spec.scaffold.saver is None:
            tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver(
                sharded=True, max_to_keep=config.keep_checkpoint_max, defer_build=True, save_relative_paths=True,
                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours))
        hooks = [tf.train.NanTensorHook(spec.loss), *hooks, *spec.training_hooks]
        if steps is not None or max_steps is not None:
            hooks.insert(0, tf.train.StopAtStepHook(num_steps=steps, last_step=max_steps))
        if config.log_step_count_steps:
            hooks.append(tf.train.LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                                    every_n_iter=config.log_step_count_steps))
        chief_hooks = list(spec.training_chief_hooks)
        if config.save_checkpoints_steps or config.save_checkpoints_secs:
            if not any(isinstance(hook, tf.train.CheckpointSaverHook) for hook in hooks + chief_hooks):
                chief_hooks.append(tf.train.CheckpointSaverHook(
                    config.model_dir, save_secs=config.save_checkpoints_secs, scaffold=spec.scaffold,
                    save_steps=config.save_checkpoints_steps, listeners=saving_listeners))
        elif saving_listeners:
            raise ValueError("Estimator.train: saving_listeners need checkpoints, but the RunConfig sets neither "
                             "save_checkpoints_steps nor save_checkpoints_secs")
        loss = None
        with tf.train.MonitoredTrainingSession(
                master=config.master, is_chief=config.is_chief, checkpoint_dir=config.model_dir,
                scaffold=spec.scaffold, hooks=hooks, chief_only_hooks=chief_hooks, save_checkpoint_secs=0,
                save_checkpoint_steps=None, save_summaries_steps=config.save_summary_steps or 0,
                config=config.session_config, log_step_count_steps=config.log_step_count_steps) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
        tf.logging.info("Loss for final step: %s.", loss)
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """The metrics (eval_metric_ops, 'loss' and 'global_step') over `steps` batches or all of input_fn's
        data, from `checkpoint_path` or the latest checkpoint; also written as summaries to model_dir/eval[_name]."""
        if steps is not None and steps <= 0:
            raise ValueError(f"Estimator.evaluate: steps must be > 0, got {steps}")
        hooks = _checked_hooks("hooks", hooks)
        checkpoint = self._checkpoint_to_read(checkpoint_path, "evaluate")
        with self._new_graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            features, labels, input_hooks = calls.features_and_labels(
                input_fn, ModeKeys.EVAL, self.params, self.config)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
            values, updates = _metric_ops({LOSS_METRIC_KEY: tf.metrics.mean(spec.loss), **spec.eval_metric_ops})
            values["global_step"] = global_step
            final = tf.train.FinalOpsHook(values)
            all_hooks = [*input_hooks, *hooks, *spec.evaluation_hooks, final]
            if steps is not None:
                all_hooks.insert(0, _StopAfterRunsHook(steps))
            with self._session(spec.scaffold, checkpoint, all_hooks) as session:
                while not session.should_stop():
                    session.run(updates)
            results = dict(final.final_ops_values)
        _write_eval_summaries(os.path.join(self.model_dir, "eval" if not name else "eval_" + name), results)
        tf.logging.info("Saving dict for global step %d: %s", results["global_step"],
                        ", ".join(f"{key} = {value}" for key, value in sorted(results.items())))
        return results

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yield the model's predictions for input_fn's features: one example at a time (a dict when predictions
        is a dict), or whole batches when yield_single_examples is False."""
        hooks = _checked_hooks("hooks", hooks)
        checkpoint = self._checkpoint_to_read(checkpoint_path, "predict")
        with self._new_graph().as_default():
            tf.train.get_or_create_global_step()
            features, _, input_hooks = calls.features_and_labels(
                input_fn, ModeKeys.PREDICT, self.params, self.config)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            predictions = _selected(spec.predictions, predict_keys)
            with self._session(spec.scaffold, checkpoint, [*input_hooks, *hooks, *spec.prediction_hooks]) \
                    as session:
                while not session.should_stop():
                    batch = session.run(predictions)
                    if not yield_single_examples:
                        yield batch
                    else:
                        yield from _single_examples(batch)

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                           checkpoint_path=None, experimental_mode=ModeKeys.PREDICT):
        """Export the PREDICT graph with the latest (or given) checkpoint's weights as a SavedModel in a new
        timestamped folder under export_dir_base; its path, as bytes."""
        from npu_bridge.tf1compat.estimator.exporting import export_saved_model

        return export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                  checkpoint_path, experimental_mode)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                          checkpoint_path=None, strip_default_attrs=False):
        """TF 1.x's name for export_saved_model."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)

    def _checkpoint_to_read(self, checkpoint_path, what):
        checkpoint = checkpoint_path or self.latest_checkpoint()
        if checkpoint is None:
            tf.logging.info("Could not find trained model in model_dir: %s, running initialization to %s.",
                            self.model_dir, what)
        return checkpoint

    def _session(self, scaffold, checkpoint, hooks):
        creator = tf.train.ChiefSessionCreator(scaffold=scaffold, master=self._config.master,
                                               config=self._config.session_config,
                                               checkpoint_filename_with_path=checkpoint)
        return tf.train.MonitoredSession(session_creator=creator, hooks=hooks)


def _resolved_config(config, model_dir):
    """The RunConfig to use: a default one, with a default session config, and model_dir from the argument, the
    config or a new temporary folder."""
    if config is None:
        config = RunConfig()
        tf.logging.info("Using default config.")
    if not isinstance(config, RunConfig):
        raise ValueError(f"Estimator: config must be a tf.estimator.RunConfig, got {type(config).__name__}")
    if config.session_config is None:
        config = config.replace(session_config=get_default_session_config())
    model_dir = None if model_dir is None else os.fspath(model_dir)
    if model_dir and config.model_dir is not None and config.model_dir != model_dir:
        raise ValueError(f"Estimator: model_dir is set both in the constructor ({model_dir!r}) and in the RunConfig "
                         f"({config.model_dir!r}), with different values")
    if model_dir:
        return config.replace(model_dir=model_dir)
    if config.model_dir is None:
        model_dir = tempfile.mkdtemp()
        tf.logging.warn("Using temporary folder as model directory: %s", model_dir)
        return config.replace(model_dir=model_dir)
    return config


def _warm_start_settings(warm_start_from):
    if warm_start_from is None or isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        return WarmStartSettings(ckpt_to_initialize_from=os.fsdecode(warm_start_from))
    raise ValueError(f"Estimator: warm_start_from must be a path or a WarmStartSettings, got "
                     f"{type(warm_start_from).__name__}")


def _global_step_in(model_dir):
    """The global step of the latest checkpoint in `model_dir`, 0 when there is none."""
    checkpoint = tf.train.latest_checkpoint(model_dir)
    if checkpoint is None:
        return 0
    return int(tf.train.load_variable(checkpoint, tf.GraphKeys.GLOBAL_STEP))


_load_global_step_from_checkpoint_dir = _global_step_in     # the private name some ported scripts import


def _checked_hooks(name, hooks):
    hooks = list(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.train.SessionRunHook):
            raise TypeError(f"Estimator: {name} must be SessionRunHook instances, got {type(hook).__name__}")
    return hooks


def _check_hooks_type(hooks):
    """TF 1.15's name for the hooks check: ported Estimator subclasses import it (Transformer's nmt_estimator)."""
    return _checked_hooks("hooks", hooks)


def _metric_ops(metrics):
    """({name: value tensor}, [update ops]) for metrics given as (value, update) pairs or Keras Metric objects."""
    values, updates = {}, []
    for name, metric in metrics.items():
        if isinstance(metric, tuple):
            values[name], update = metric
        else:
            values[name], update = metric.result(), metric.updates
        updates.append(update)
    return values, updates


class _StopAfterRunsHook(tf.train.SessionRunHook):
    """Requests a stop after `runs` session runs (evaluate's `steps`)."""

    def __init__(self, runs):
        self._runs, self._done = runs, 0

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._done >= self._runs:
            run_context.request_stop()


def _write_eval_summaries(directory, results):
    """The scalar results as one summary at their global step (what TensorBoard shows for an evaluation)."""
    summary = tf.Summary()
    for key, value in results.items():
        if key != "global_step" and np.ndim(value) == 0 and np.issubdtype(np.asarray(value).dtype, np.number):
            summary.value.add(tag=key, simple_value=float(value))
    writer = tf.summary.FileWriterCache.get(directory)
    writer.add_summary(summary, int(results["global_step"]))
    writer.flush()


def _selected(predictions, predict_keys):
    if predict_keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("Estimator.predict: predict_keys given, but the model_fn's predictions are not a dict")
    predict_keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
    missing = [key for key in predict_keys if key not in predictions]
    if missing:
        raise ValueError(f"Estimator.predict: predict_keys {missing} are not among the predictions "
                         f"{sorted(predictions)}")
    return {key: predictions[key] for key in predict_keys}


def _single_examples(batch):
    """The rows of one batch of predictions (all of whose values must share their first dimension)."""
    if not isinstance(batch, dict):
        yield from batch
        return
    sizes = {key: np.shape(value)[0] if np.ndim(value) else None for key, value in batch.items()}
    if len(set(sizes.values())) != 1 or None in sizes.values():
        raise ValueError(f"Estimator.predict: with yield_single_examples every prediction needs the same batch "
                         f"size (first dimension), got {sizes}; pass yield_single_examples=False")
    for row in range(next(iter(sizes.values()))):
        yield {key: value[row] for key, value in batch.items()}

