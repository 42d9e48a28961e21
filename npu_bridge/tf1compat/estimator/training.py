"""TrainSpec, EvalSpec and train_and_evaluate, run locally: training, with an evaluation after each checkpoint
save at most every throttle_secs, and a final one once training ends (TF 1.15's local behaviour)."""
import collections
import os
import time

import tensorflow.compat.v1 as tf


class TrainSpec(collections.namedtuple("TrainSpec", ("input_fn", "max_steps", "hooks", "saving_listeners"))):
    """What train_and_evaluate trains on: input_fn, up to global step max_steps (None: until the data runs out)."""

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError(f"TrainSpec: input_fn must be callable, got {type(input_fn).__name__}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"TrainSpec: max_steps must be > 0, got {max_steps}")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()), tuple(saving_listeners or ()))


class EvalSpec(collections.namedtuple("EvalSpec", ("input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"))):
    """What train_and_evaluate evaluates on: `steps` batches of input_fn (None: all of it), at most every
    throttle_secs; exporters run after each evaluation."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"EvalSpec: input_fn must be callable, got {type(input_fn).__name__}")
        if steps is not None and steps <= 0:
            raise ValueError(f"EvalSpec: steps must be > 0 or None, got {steps}")
        if throttle_secs < 0 or start_delay_secs < 0:
            raise ValueError(f"EvalSpec: throttle_secs and start_delay_secs must be >= 0, got {throttle_secs} and "
                             f"{start_delay_secs}")
        if exporters is None:
            exporters = ()
        elif not isinstance(exporters, (list, tuple)):
            exporters = (exporters,)
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()), tuple(exporters), start_delay_secs,
                               throttle_secs)


class _EvaluateAfterSaves(tf.train.CheckpointSaverListener):
    """Evaluates the checkpoint just saved when throttle_secs have passed since the last evaluation (not the one
    saved as training starts), and the final checkpoint when training ends; keeps the last result and the
    exporters' results."""

    def __init__(self, estimator, eval_spec, max_steps):
        self._estimator, self._spec, self._max_steps = estimator, eval_spec, max_steps
        self._last_evaluated_step = None
        self._last_time = None
        self.eval_result = None
        self.export_results = []

    def begin(self):
        self._last_time = time.time()
        self._first_save = True

    def after_save(self, session, global_step_value):
        if self._first_save:
            self._first_save = False
        elif time.time() - self._last_time >= self._spec.throttle_secs:
            final = self._max_steps is not None and global_step_value >= self._max_steps
            self._evaluate(global_step_value, is_the_final_export=final)

    def end(self, session, global_step_value):
        if global_step_value != self._last_evaluated_step:
            self._evaluate(global_step_value, is_the_final_export=True)

    def _evaluate(self, global_step_value, is_the_final_export=False):
        self._last_time = time.time()
        self._last_evaluated_step = global_step_value
        spec = self._spec
        self.eval_result = self._estimator.evaluate(spec.input_fn, steps=spec.steps, hooks=spec.hooks,
                                                    name=spec.name)
        checkpoint = self._estimator.latest_checkpoint()
        self.export_results = []        # the exports of the latest evaluation, as TF returns them
        for exporter in spec.exporters:
            export_path = os.path.join(self._estimator.model_dir, "export", exporter.name)
            self.export_results.append(exporter.export(self._estimator, export_path, checkpoint, self.eval_result,
                                                       is_the_final_export))


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Train `estimator` as train_spec says, evaluating as eval_spec says; (last metrics, exporter results)."""
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"train_and_evaluate: train_spec must be a TrainSpec, got {type(train_spec).__name__}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"train_and_evaluate: eval_spec must be an EvalSpec, got {type(eval_spec).__name__}")
    config = estimator.config
    if not (config.save_checkpoints_steps or config.save_checkpoints_secs):
        raise ValueError("train_and_evaluate evaluates saved checkpoints: the RunConfig must set "
                         "save_checkpoints_steps or save_checkpoints_secs")
    listener = _EvaluateAfterSaves(estimator, eval_spec, train_spec.max_steps)
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks), max_steps=train_spec.max_steps,
                    saving_listeners=[*train_spec.saving_listeners, listener])
    return listener.eval_result, listener.export_results
