"""Training-loop and per-tensor helpers of the real npu.util module.

Iterations per loop: on the NPU one `sess.run` of the op returned by `set_iteration_per_loop` runs the training
step `iterations_per_loop` times on the device. Here the op is a group named `IterationOp` whose NodeDef carries
the attribute `_npu_iterations_per_loop`; the emulated session repeats a run of it that many times and checks
the number against `parameter_map["iterations_per_loop"]`.
"""
import tensorflow.compat.v1 as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge import tf_private
from npu_bridge.core.contract import ITERATIONS_PER_LOOP_ATTR

_ITERATIONS_VAR_NAME = "npu_runconfig/iterations_per_loop"
_ITERATION_OPS = "npu_bridge_iteration_ops"


def _check_iterations(iterations_per_loop):
    if isinstance(iterations_per_loop, bool) or not isinstance(iterations_per_loop, int) or iterations_per_loop < 1:
        raise ValueError(f"iterations_per_loop must be a positive integer, got {iterations_per_loop!r}")


def _iterations_var(graph):
    """The graph's `npu_runconfig/iterations_per_loop` variable (a local int64, kept out of checkpoints)."""
    existing = [v for v in graph.get_collection(tf.GraphKeys.LOCAL_VARIABLES) if v.op.name == _ITERATIONS_VAR_NAME]
    if existing:
        return existing[0]
    with graph.as_default(), tf.name_scope(None):
        return tf.Variable(1, dtype=tf.int64, trainable=False, name=_ITERATIONS_VAR_NAME,
                           collections=[tf.GraphKeys.LOCAL_VARIABLES])


def create_iteration_per_loop_var(train_op):
    """Wrap `train_op` in a group op named IterationOp; `load_iteration_per_loop_var` later sets its loop count."""
    graph = train_op.graph
    _iterations_var(graph)
    with graph.as_default():
        iteration_op = tf.group(train_op, name="IterationOp")
    graph.add_to_collection(_ITERATION_OPS, iteration_op)
    return iteration_op


def load_iteration_per_loop_var(sess, iterations_per_loop):
    """Set the loop count of every IterationOp of the session's graph and load it into the loop variable.

    Call it before the first run of the IterationOp: the attribute is read when the op is run.
    """
    _check_iterations(iterations_per_loop)
    for iteration_op in sess.graph.get_collection(_ITERATION_OPS):
        tf_private.set_attr(iteration_op, ITERATIONS_PER_LOOP_ATTR, attr_value_pb2.AttrValue(i=iterations_per_loop))
    # What Variable.load does, without its deprecation warning and without adding an op to the graph.
    initializer = _iterations_var(sess.graph).initializer
    sess.run(initializer, {initializer.inputs[1]: iterations_per_loop})


def set_iteration_per_loop(sess, train_op, iterations_per_loop=1):
    """Return the op whose single `sess.run` runs `train_op` `iterations_per_loop` times (a group named IterationOp);
    `train_op` itself for one iteration, as the real helper does."""
    if not isinstance(train_op, tf.Operation):
        described = f"Tensor '{train_op.name}' of type {train_op.dtype.name}; pass its .op" \
            if isinstance(train_op, tf.Tensor) else type(train_op).__name__
        raise ValueError(f"set_iteration_per_loop: train_op must be an Operation (what optimizer.minimize returns), "
                         f"got {described}")
    _check_iterations(iterations_per_loop)
    if iterations_per_loop == 1:
        return train_op
    iteration_op = create_iteration_per_loop_var(train_op)
    load_iteration_per_loop_var(sess, iterations_per_loop)
    return iteration_op


class IterationPerLoop:
    """Object form used by estimator-style scripts: create the IterationOp, then load the count."""

    def create_iteration_per_loop_var(self, train_op):
        return create_iteration_per_loop_var(train_op)

    def load_iteration_per_loop_var(self, sess, iterations_per_loop):
        load_iteration_per_loop_var(sess, iterations_per_loop)


def keep_tensors_dtypes(graph, input_tensors):
    """Tag the ops producing `input_tensors` (Tensors or names "op:0") with _keep_dtype=1 so they keep their dtype."""
    if not isinstance(graph, tf.Graph):
        raise ValueError(f"keep_tensors_dtypes: graph must be a tf.Graph, got {type(graph).__name__}")
    if not isinstance(input_tensors, (tuple, list)):
        raise ValueError(f"keep_tensors_dtypes: input_tensors must be a tuple or list, got {type(input_tensors).__name__}")
    keep = attr_value_pb2.AttrValue(i=1)
    for tensor in input_tensors:
        name = tensor if isinstance(tensor, str) else tensor.name
        op = graph.get_tensor_by_name(name).op if ":" in name else graph.get_operation_by_name(name)
        tf_private.set_attr(op, "_keep_dtype", keep)


_values = {}


def global_dict_init():
    """Start the adapter's process-wide key-value store afresh (init_resource keeps the rank facts in it)."""
    _values.clear()


def set_value(key, value):
    _values[key] = value


def get_value(key, default=None):
    return _values.get(key, default)


def set_graph_exec_config(fetch, dynamic_input=False, dynamic_graph_execute_mode="dynamic_execute",
                          dynamic_inputs_shape_range=None, is_train_graph=False, experimental_config=None):
    """Return `fetch` (an Operation, Tensor, tensor name, or a list or tuple of them) unchanged.

    On the NPU these options steer how the graph is compiled for dynamic input shapes; the emulator runs the
    graph with TensorFlow's own kernels, which take any shape, so there is nothing to set.
    """
    if not isinstance(fetch, (tf.Operation, tf.Tensor, str, list, tuple)):
        raise ValueError(f"set_graph_exec_config: fetch must be an Operation, Tensor, tensor name, list or tuple, "
                         f"got {type(fetch).__name__}")
    if dynamic_graph_execute_mode != "dynamic_execute":
        raise ValueError(f"set_graph_exec_config: dynamic_graph_execute_mode must be 'dynamic_execute', "
                         f"got {dynamic_graph_execute_mode!r}")
    return fetch
