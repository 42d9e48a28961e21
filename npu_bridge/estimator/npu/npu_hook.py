"""Session hooks of the real adapter for a one-rank job."""
import tensorflow.compat.v1 as tf

from npu_bridge.hccl.rank import check_single_rank


class NPUBroadcastGlobalVariablesHook(tf.train.SessionRunHook):
    """Broadcasts rank root_rank's initial variables to every rank; with one rank there is nothing to send."""

    def __init__(self, root_rank=None, index=None):
        check_single_rank("NPUBroadcastGlobalVariablesHook")
        super().__init__()
        self.root_rank = root_rank
        self.index = index


class NPUCheckpointSaverHook(tf.train.CheckpointSaverHook):
    """The adapter's checkpoint hook: a CheckpointSaverHook with the real hook's argument list (no
    save_graph_def). Checkpoints hold the float32 variables, as on the NPU, so they restore anywhere."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        super().__init__(checkpoint_dir, save_secs=save_secs, save_steps=save_steps, saver=saver,
                         checkpoint_basename=checkpoint_basename, scaffold=scaffold, listeners=listeners)


class NPUOutputTensorHook(tf.train.SessionRunHook):
    """Fetches `tensors` with every run and hands the collected values to `output_fn` every
    `output_every_n_steps` runs and once more at the end.

    `tensors` maps tags to tensors or tensor names (a list or tuple uses each tensor's name as its tag);
    `dependencies` are ops the values are read after. `output_fn` receives a list with one {tag: value} dict per
    run. Beyond the real hook: output_every_n_steps=0 (its default) means "only at the end" (the real hook
    divides by it after the first run), and without an output_fn the values are logged.
    """

    def __init__(self, tensors, dependencies=None, output_fn=None, output_every_n_steps=0):
        if isinstance(output_every_n_steps, bool) or not isinstance(output_every_n_steps, int) or \
                output_every_n_steps < 0:
            raise ValueError(f"NPUOutputTensorHook: output_every_n_steps must be an int >= 0, "
                             f"got {output_every_n_steps!r}")
        if output_fn is not None and not callable(output_fn):
            raise ValueError(f"NPUOutputTensorHook: output_fn must be callable, got {type(output_fn).__name__}")
        if tensors is not None and not isinstance(tensors, dict):
            tensors = {getattr(t, "name", t): t for t in tensors}
        if tensors and dependencies is not None:
            if not isinstance(dependencies, (list, tuple)):
                dependencies = [dependencies]
            graph = tf.get_default_graph()
            with tf.control_dependencies(dependencies):
                tensors = {tag: tf.identity(graph.as_graph_element(value)) for tag, value in tensors.items()}
        self._tensors = tensors or {}
        self._output_fn = output_fn or _log_outputs
        self._every = output_every_n_steps
        self._fetches = None
        self._outputs = []
        self._runs = 0

    def begin(self):
        graph = tf.get_default_graph()
        self._fetches = {tag: graph.as_graph_element(value) for tag, value in self._tensors.items()}

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._fetches) if self._fetches else None

    def after_run(self, run_context, run_values):
        if self._fetches:
            self._outputs.append(dict(run_values.results))
        self._runs += 1
        if self._every and self._runs % self._every == 0:
            self._flush()

    def end(self, session):
        if self._outputs:
            self._flush()

    def _flush(self):
        outputs, self._outputs = self._outputs, []
        self._output_fn(outputs)


def _log_outputs(outputs):
    for values in outputs:
        tf.logging.info("NPUOutputTensorHook: %s", ", ".join(f"{tag} = {value}" for tag, value in values.items()))
