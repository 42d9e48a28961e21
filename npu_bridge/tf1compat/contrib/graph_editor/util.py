"""graph_editor.util: TF 1.15's argument helpers (lists of ops or tensors from one graph) and the op-level edits
graph_editor's callers use (add_control_inputs, ControlOutputs)."""
import tensorflow as tf

from npu_bridge import tf_private


def is_iterable(obj):
    """Whether `obj` can be iterated (a tensor never counts: iterating one is an error in a graph)."""
    if isinstance(obj, tf.Tensor):
        return False
    try:
        iter(obj)
    except TypeError:
        return False
    return True


def concatenate_unique(la, lb):
    """Append to list `la` the elements of `lb` not already in it; returns `la`."""
    seen = set(la)
    for item in lb:
        if item not in seen:
            la.append(item)
            seen.add(item)
    return la


def get_unique_graph(tops, check_types=None, none_if_empty=False):
    """The one graph of the ops / tensors in `tops`: ValueError if they come from several, TypeError if an element
    is not of `check_types` (default Operation or Tensor)."""
    if isinstance(tops, tf.Graph):
        return tops
    if not is_iterable(tops):
        raise TypeError(f"graph_editor: expected an iterable of tf.Operation / tf.Tensor, got {type(tops).__name__}")
    check_types = (tf.Operation, tf.Tensor) if check_types is None else check_types
    check_types = check_types if isinstance(check_types, tuple) else (check_types,)
    graph = None
    for top in tops:
        if not isinstance(top, check_types):
            names = ", ".join(kind.__name__ for kind in check_types)
            raise TypeError(f"graph_editor: expected a {names}, got {type(top).__name__}: {top!r}")
        if graph is None:
            graph = top.graph
        elif graph is not top.graph:
            raise ValueError(f"graph_editor: {top.name} belongs to another graph than the other elements")
    if graph is None and not none_if_empty:
        raise ValueError("graph_editor: cannot find the graph of an empty list")
    return graph


def make_list_of_op(ops, check_graph=True, allow_graph=True, ignore_ts=False):
    """`ops` (one op, an iterable of them, or a graph: all its ops) as a list of tf.Operation; tensors are
    dropped when ignore_ts, an error otherwise."""
    if isinstance(ops, tf.Graph):
        if not allow_graph:
            raise TypeError(f"graph_editor: expected operations, got the graph {ops}")
        return ops.get_operations()
    if not is_iterable(ops):
        ops = [ops]
    ops = list(ops)
    if not ops:
        return []
    if check_graph:
        get_unique_graph(ops, check_types=None if ignore_ts else tf.Operation)
    return [op for op in ops if isinstance(op, tf.Operation)]


def make_list_of_t(ts, check_graph=True, allow_graph=True, ignore_ops=False):
    """`ts` (one tensor, an iterable of them, or a graph: all its tensors) as a list of tf.Tensor; operations are
    dropped when ignore_ops, an error otherwise."""
    if isinstance(ts, tf.Graph):
        if not allow_graph:
            raise TypeError(f"graph_editor: expected tensors, got the graph {ts}")
        return [t for op in ts.get_operations() for t in op.outputs]
    if not is_iterable(ts):
        ts = [ts]
    ts = list(ts)
    if not ts:
        return []
    if check_graph:
        get_unique_graph(ts, check_types=None if ignore_ops else tf.Tensor)
    return [t for t in ts if isinstance(t, tf.Tensor)]


def get_generating_ops(ts):
    """The ops producing the tensors `ts`."""
    return [t.op for t in make_list_of_t(ts, allow_graph=False)]


def get_consuming_ops(ts):
    """The ops consuming any of the tensors `ts`, each once, in order."""
    ops = []
    for t in make_list_of_t(ts, allow_graph=False):
        concatenate_unique(ops, t.consumers())
    return ops


def add_control_inputs(op, cops):
    """Make the operations `cops` control inputs of `op`; ValueError if one already is."""
    if not isinstance(op, tf.Operation):
        raise TypeError(f"add_control_inputs: expected a tf.Operation, got {type(op).__name__}")
    cops = make_list_of_op(cops, allow_graph=False)
    for cop in cops:
        if cop in op.control_inputs:
            raise ValueError(f"add_control_inputs: {cop.name} is already a control input of {op.name}")
    for cop in cops:
        tf_private.add_control_input(op, cop)


class ControlOutputs:
    """For each op of a graph, the ops that have it as a control input (the reverse of op.control_inputs), as the
    walks' control_outputs argument takes them."""

    def __init__(self, graph):
        if not isinstance(graph, tf.Graph):
            raise TypeError(f"ControlOutputs: expected a tf.Graph, got {type(graph).__name__}")
        self._graph = graph
        self._outputs = {}
        for op in graph.get_operations():
            for control_input in op.control_inputs:
                concatenate_unique(self._outputs.setdefault(control_input, []), [op])

    @property
    def graph(self):
        return self._graph

    def get(self, op):
        """The ops `op` is a control input of."""
        return self._outputs.get(op, [])


def predefined_collection_names():
    """The collection names tf.compat.v1.GraphKeys defines (a copy keeps these names; others get the new scope)."""
    return {value for name, value in vars(tf.compat.v1.GraphKeys).items()
            if not name.startswith("_") and isinstance(value, str)}


def scope_finalize(scope):
    """A name scope ending with "/" (empty stays empty)."""
    return scope if not scope or scope.endswith("/") else scope + "/"
