"""Every private TensorFlow API the runtime and the debug tools use, in one place.

TensorFlow gives no public way to import a GraphDef without its Python device pass, to append C operations to a
graph, to take a session's run lock, or to walk a fetch structure as Session.run does; the emulation needs all of
these. Each is reached through a name here, and `ACCESSED` lists every one of them by its TensorFlow path:
tests/test_tf_private.py resolves each entry, so a TensorFlow release that renames or drops one fails a test
named after exactly that API.
"""
from tensorflow.python.client import pywrap_tf_session as c_api
from tensorflow.python.client import session as tf_session
from tensorflow.python.framework import c_api_util, dtypes, error_interpolation, errors, importer
from tensorflow.python.framework import ops as tf_ops
from tensorflow.python.training import monitored_session

__all__ = ["ACCESSED", "c_api", "c_api_util"]

# The C API functions called through pywrap_tf_session (runtime.inner_ops, runtime.program).
C_API_FUNCTIONS = ("TF_OperationName", "TF_OperationNumOutputs", "TF_OperationOutputType", "TF_OperationOpType",
                   "GetOperationInputs", "TF_OperationGetAttrValueProto", "TF_GetBuffer", "TF_NewOperation",
                   "TF_AddInput", "TF_SetAttrValueProto", "TF_FinishOperation", "TF_NewBufferFromString",
                   "TF_GraphImportGraphDefWithResults", "TF_DeleteImportGraphDefResults", "TF_DeleteBuffer")


def session_run_lock(graph):
    """The lock Session.run holds on `graph` while it extends the C graph (a context manager)."""
    return graph._session_run_lock()


def mutation_lock(graph):
    """The lock that guards changes to `graph`'s C graph (a context manager)."""
    return graph._mutation_lock()


def c_graph(graph):
    """`graph`'s C graph handle, as a context manager yielding the TF_Graph."""
    return graph._c_graph.get()


def raw_c_graph(graph):
    """`graph`'s C graph wrapper, as the C API's import functions take it."""
    return graph._c_graph


def python_operation(graph, c_op):
    """A Python Operation for C operation `c_op` of `graph`, without device functions or control dependencies."""
    return graph._create_op_from_tf_operation(c_op, compute_device=False)


def import_graph_def_unchecked(graph_def, input_map):
    """import_graph_def of `graph_def` into the default graph with no name prefix, returning its operations,
    without the check that colocation constraints (`_class: loc:@v`) name nodes of the same GraphDef."""
    return importer._import_graph_def_internal(graph_def, input_map=input_map, name="",
                                               return_elements=[node.name for node in graph_def.node],
                                               validate_colocation_constraints=False)


def populate_import_options(options):
    """Fill TF_ImportGraphDefOptions as import_graph_def does for an empty prefix and no input map."""
    importer._PopulateTFImportGraphDefOptions(options, "", {}, None, True)


def new_c_operations(graph):
    """The C operations added to `graph` that have no Python Operation yet (TensorFlow's C++ Graph base)."""
    return graph.new_operations()


def add_control_input(op, source):
    """Make `source` a control input of the existing operation `op`."""
    op._add_control_input(source)


def c_op(op):
    """The TF_Operation of a Python Operation."""
    return op._c_op


def control_flow_context(op):
    """The v1 while-loop / cond context `op` was built in, or None."""
    return op._control_flow_context


def op_id(op):
    """The creation order of `op` in its graph."""
    return op._id


def session_config(session):
    """The ConfigProto a tf.compat.v1 session was created with."""
    return session._config


def monitored_inner_session(session):
    """The tf.compat.v1 session inside a MonitoredSession (None for anything else)."""
    return getattr(session, "_tf_sess", lambda: None)()


def is_ref_dtype(dtype):
    return dtype._is_ref_dtype


def fetch_mapper(fetches):
    """Session.run's own walk of a fetch structure (unique_fetches(), build_results(values))."""
    return tf_session._FetchMapper.for_fetch(fetches)


def feed_expansions():
    """Session.run's (type, fetch_fn, feed_fn, feed_fn_for_partial_run) table of composite feeds."""
    return tf_session._REGISTERED_EXPANSIONS


def convert_to_numpy_obj(numpy_dtype, value):
    """A fed Python scalar as Session.run converts it to `numpy_dtype`."""
    return tf_session._convert_to_numpy_obj(numpy_dtype, value)


NODEDEF_NAME_RE = tf_session.BaseSession._NODEDEF_NAME_RE   # the node name in an OpError's message


def interpolate_graph(message, graph):
    """An OpError message with `{{node x}}` references expanded to the ops' source lines in `graph`."""
    return error_interpolation.interpolate_graph(message, graph)


def set_error_message(error, message):
    """Replace an OpError's message in place (its first line in a traceback is read from it)."""
    error._message = message


def _an_operation():
    graph = tf_ops.Graph()
    with graph.as_default():
        return tf_ops.convert_to_tensor(1.0).op


def _a_session():
    session = tf_session.Session(graph=tf_ops.Graph())
    session.close()
    return session


# TensorFlow path -> how this module reaches it. tests/test_tf_private.py resolves each.
ACCESSED = {
    "Graph._session_run_lock": lambda: tf_ops.Graph._session_run_lock,
    "Graph._mutation_lock": lambda: tf_ops.Graph._mutation_lock,
    "Graph._c_graph": lambda: tf_ops.Graph()._c_graph.get,
    "Graph._create_op_from_tf_operation": lambda: tf_ops.Graph._create_op_from_tf_operation,
    "PyGraph.new_operations": lambda: tf_ops.Graph.new_operations,
    "importer._import_graph_def_internal": lambda: importer._import_graph_def_internal,
    "importer._PopulateTFImportGraphDefOptions": lambda: importer._PopulateTFImportGraphDefOptions,
    "Operation._add_control_input": lambda: tf_ops.Operation._add_control_input,
    "Operation._c_op": lambda: tf_ops.Operation._c_op,
    "Operation._id": lambda: _an_operation()._id,
    "BaseSession._config": lambda: _a_session()._config,
    "_MonitoredSession._tf_sess": lambda: monitored_session._MonitoredSession._tf_sess,
    "Operation._control_flow_context": lambda: _an_operation()._control_flow_context is None,
    "DType._is_ref_dtype": lambda: dtypes.DType._is_ref_dtype,
    "session._FetchMapper.for_fetch": lambda: tf_session._FetchMapper.for_fetch,
    "session._REGISTERED_EXPANSIONS": lambda: tf_session._REGISTERED_EXPANSIONS,
    "session._convert_to_numpy_obj": lambda: tf_session._convert_to_numpy_obj,
    "BaseSession._NODEDEF_NAME_RE": lambda: tf_session.BaseSession._NODEDEF_NAME_RE,
    "BaseSession._make_callable_from_options": lambda: tf_session.BaseSession._make_callable_from_options,
    "error_interpolation.interpolate_graph": lambda: error_interpolation.interpolate_graph,
    "OpError._message": lambda: errors.OpError(None, None, "m", None)._message,
    "c_api_util.tf_output": lambda: c_api_util.tf_output,
    "c_api_util.tf_buffer": lambda: c_api_util.tf_buffer,
    "c_api_util.ScopedTFImportGraphDefOptions": lambda: c_api_util.ScopedTFImportGraphDefOptions,
    **{f"pywrap_tf_session.{name}": (lambda name=name: getattr(c_api, name)) for name in C_API_FUNCTIONS},
}
