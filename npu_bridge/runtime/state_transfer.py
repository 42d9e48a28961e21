"""Copy variable values from one inner session to another, so rebuilding the inner graph never loses state."""
import numpy as np
import tensorflow as tf

_REF_VARIABLES = ("VariableV2", "Variable")
_RESOURCE_VARIABLES = ("VarHandleOp",)
_SCOPE = "NpuBridgeStateTransfer"


def read_variables(session, graph):
    """{variable op name: numpy value} for every variable of `graph` initialized in `session`."""
    variables = [op for op in graph.get_operations() if op.type in _REF_VARIABLES + _RESOURCE_VARIABLES]
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


def write_variables(session, graph, values):
    """Assign `values` ({variable op name: numpy value}) to the same-named variables of `graph`."""
    assigns, feeds = [], {}
    with graph.as_default(), tf.name_scope(_SCOPE):
        for name, value in values.items():
            try:
                op = graph.get_operation_by_name(name)
            except KeyError:
                continue
            if op.type not in _REF_VARIABLES + _RESOURCE_VARIABLES:
                continue
            holder = tf.compat.v1.placeholder(tf.as_dtype(np.asarray(value).dtype))
            assigns.append(_assign(op, holder))
            feeds[holder] = value
    if assigns:
        session.run(assigns, feeds)


def _is_initialized(op):
    if op.type in _REF_VARIABLES:
        return tf.raw_ops.IsVariableInitialized(ref=op.outputs[0])
    return tf.raw_ops.VarIsInitializedOp(resource=op.outputs[0])


def _read(op):
    if op.type in _REF_VARIABLES:
        return tf.identity(op.outputs[0])
    return tf.raw_ops.ReadVariableOp(resource=op.outputs[0], dtype=op.get_attr("dtype"))


def _assign(op, value):
    if op.type in _REF_VARIABLES:
        return tf.raw_ops.Assign(ref=op.outputs[0], value=value, validate_shape=False).op
    return tf.raw_ops.AssignVariableOp(resource=op.outputs[0], value=value)
