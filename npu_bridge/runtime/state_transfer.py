"""Copy variable values from one inner session to another, so rebuilding the inner graph never loses state."""
from collections.abc import Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from npu_bridge.core.contract import PERSISTENT_VARIABLE_OPS, REF_VARIABLE_OPS

_SCOPE = "NpuBridgeStateTransfer"
# {variable op name: its value}; sessions, graphs and ops are TensorFlow's (Any: it has no type information)
VariableValues = dict[str, Any]


def read_variables(session: Any, graph: Any) -> VariableValues:
    """{variable op name: numpy value} for every variable of `graph` initialized in `session`."""
    variables = [op for op in graph.get_operations() if op.type in PERSISTENT_VARIABLE_OPS]
    if not variables:
        return {}
    with graph.as_default(), tf.name_scope(_SCOPE):
        checks = [_is_initialized(op) for op in variables]
    initialized = session.run(checks)
    chosen = [op for op, ready in zip(variables, initialized) if ready]
    if not chosen:
        return {}
    with graph.as_default(), tf.name_scope(_SCOPE):
        reads = [_read(op) for op in chosen]
    return dict(zip((op.name for op in chosen), session.run(reads)))


def write_variables(session: Any, graph: Any, values: Mapping[str, Any]) -> None:
    """Assign `values` ({variable op name: numpy value}) to the same-named variables of `graph`."""
    assigns: list[Any] = []
    feeds: dict[Any, Any] = {}
    with graph.as_default(), tf.name_scope(_SCOPE):
        for name, value in values.items():
            try:
                op = graph.get_operation_by_name(name)
            except KeyError:
                continue
            if op.type not in PERSISTENT_VARIABLE_OPS:
                continue
            holder = tf.compat.v1.placeholder(tf.as_dtype(np.asarray(value).dtype))
            assigns.append(_assign(op, holder))
            feeds[holder] = value
    if assigns:
        session.run(assigns, feeds)


def _is_initialized(op: Any) -> Any:
    if op.type in REF_VARIABLE_OPS:
        return tf.raw_ops.IsVariableInitialized(ref=op.outputs[0])
    return tf.raw_ops.VarIsInitializedOp(resource=op.outputs[0])


def _read(op: Any) -> Any:
    if op.type in REF_VARIABLE_OPS:
        return tf.identity(op.outputs[0])
    return tf.raw_ops.ReadVariableOp(resource=op.outputs[0], dtype=op.get_attr("dtype"))


def _assign(op: Any, value: Any) -> Any:
    if op.type in REF_VARIABLE_OPS:
        return tf.raw_ops.Assign(ref=op.outputs[0], value=value, validate_shape=False).op
    return tf.raw_ops.AssignVariableOp(resource=op.outputs[0], value=value)


class VariableCopier:
    """Reads or writes every variable of one graph again and again, building its ops once.

    For tools that copy state at every step they watch (npu-debug compare reads the emulated session's variables
    before a step and writes them into its float32 reference): read_variables / write_variables add new ops on
    each call, which a session must then be extended with.
    """

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        variables = [op for op in graph.get_operations() if op.type in PERSISTENT_VARIABLE_OPS]
        with graph.as_default(), tf.name_scope(_SCOPE):
            self._checks = [_is_initialized(op) for op in variables]
            self._reads = {op.name: _read(op) for op in variables}
        self._assigns: dict[str, tuple[Any, Any]] = {}     # variable op name -> (placeholder, assign op)

    def read(self, session: Any) -> VariableValues:
        """{variable op name: value} for every variable initialized in `session`."""
        if not self._reads:
            return {}
        names = [name for name, ready in zip(self._reads, session.run(self._checks)) if ready]
        return dict(zip(names, session.run([self._reads[name] for name in names])))

    def write(self, session: Any, values: Mapping[str, Any]) -> None:
        """Assign `values` ({variable op name: value}) to the graph's variables of those names."""
        fetches: list[Any] = []
        feeds: dict[Any, Any] = {}
        for name, value in values.items():
            if name not in self._reads:
                continue
            if name not in self._assigns:
                op = self.graph.get_operation_by_name(name)
                with self.graph.as_default(), tf.name_scope(_SCOPE):
                    holder = tf.compat.v1.placeholder(self._reads[name].dtype.base_dtype)
                    self._assigns[name] = (holder, _assign(op, holder))
            holder, assign = self._assigns[name]
            fetches.append(assign)
            feeds[holder] = value
        if fetches:
            session.run(fetches, feeds)
