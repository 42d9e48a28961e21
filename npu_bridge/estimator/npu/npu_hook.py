"""Session hooks of the real adapter."""
import tensorflow.compat.v1 as tf

from npu_bridge.estimator.npu import util
from npu_bridge.hccl import hccl_ops


def broadcast_variables(variables, root_rank):
    """One op assigning rank root_rank's value of every variable in `variables` to it on every rank."""
    updates = []
    for var in variables:
        value = hccl_ops.broadcast([var], root_rank)[0]
        updates.append(tf.assign(var, value))
    return tf.group(*updates, name="NPUBroadcastGlobalVariables")


class NPUBroadcastGlobalVariablesHook(tf.train.SessionRunHook):
    """Broadcasts rank root_rank's trainable variables to every rank once the session exists, as the real hook
    does (so every rank starts from the same weights, initialized or restored); `index` is this rank's id."""

    def __init__(self, root_rank=None, index=None):
        super().__init__()
        self.root_rank = root_rank
        self.index = index
        self._broadcast = None

    def begin(self):
        if self._broadcast is None or self._broadcast.graph is not tf.get_default_graph():
            self._broadcast = broadcast_variables(tf.trainable_variables(), self.root_rank or 0)

    def after_create_session(self, session, coord):
        session.run(self._broadcast)


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


class SetIterationsVarHook(tf.train.SessionRunHook):
    """Loads `iterations_per_loop` into the device loop once the session exists, as the real NPUEstimator's hook
    does: the graph's npu_runconfig/iterations_per_loop variable and the loop count of every IterationOp that
    util.create_iteration_per_loop_var made (NPUEstimator's own IterationOp takes its count from NPURunConfig)."""

    def __init__(self, iterations_per_loop=None):
        util._check_iterations(iterations_per_loop)
        self._iterations_per_loop = iterations_per_loop

    def begin(self):
        util._iterations_var(tf.get_default_graph())

    def after_create_session(self, session, coord):
        util.load_iteration_per_loop_var(session, self._iterations_per_loop)
