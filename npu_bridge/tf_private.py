"""Every private TensorFlow API npu_bridge uses, in one place.

TensorFlow gives no public way to import a GraphDef without its Python device pass, to append C operations to a
graph, to take a session's run lock, to set an attribute on an existing op, or to walk a fetch structure as
Session.run does; the emulation, the estimator faces, the emulated ops and the tf.contrib stand-ins need these.
Each private attribute is reached through a name here, and `ACCESSED` lists every one of them by its TensorFlow
path: tests/test_tf_private.py resolves each entry, so a TensorFlow release that renames or drops one fails a
test named after exactly that API. `INTERNAL_MODULES` lists every `tensorflow.python` module imported elsewhere
in the package, with why; the same test imports every name taken from them, one test per name.
tests/test_tf_private.py also reads the package and fails on a private access outside this module.
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


def update_input(op, index, tensor):
    """Make `tensor` input `index` of the existing operation `op` (graph_editor's reroute)."""
    op._update_input(index, tensor)


def set_device(op, device):
    """Set the device of the existing operation `op` (graph_editor's copies keep their original's)."""
    op._set_device(device)


def restore_operation_outputs():
    """Give Operation back TF 1.15's `_outputs` (its list of output tensors) where TensorFlow dropped it: the
    memory-saving-gradients helpers ported scripts carry read `info._transformed_ops[op]._outputs[0]` after a
    graph_editor copy. A read-only alias of `outputs`; nothing changes where the attribute exists."""
    if not hasattr(tf_ops.Operation, "_outputs"):
        tf_ops.Operation._outputs = property(lambda op: op.outputs)


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


def set_attr(op, name, attr_value):
    """Set attribute `name` (an AttrValue) on the existing operation `op`, in the C graph too."""
    op._set_attr(name, attr_value)


def attr_scope(graph, attrs):
    """A context manager: every op `graph` creates inside it gets `attrs` ({name: AttrValue or None})."""
    return graph._attr_scope(attrs)


def variable_ref(variable):
    """The ref tensor of a ref (non-resource) tf.compat.v1 Variable, which ops that write into it take."""
    return variable._ref()


def make_callable_from_options(session, callable_options):
    """A callable of `session` for a CallableOptions proto (what tf.keras calls too)."""
    return session._make_callable_from_options(callable_options)


def adam_beta_powers(optimizer):
    """The (beta1_power, beta2_power) accumulators of a tf.compat.v1.train.AdamOptimizer."""
    return optimizer._get_beta_accumulators()


def adam_hyper_tensors(optimizer):
    """(beta1, beta2, epsilon, learning rate) as the tensors an AdamOptimizer's _prepare made of them."""
    return optimizer._beta1_t, optimizer._beta2_t, optimizer._epsilon_t, optimizer._lr_t


# The method of a legacy (Keras 2) optimizer that minimize() computes its gradients with.
KERAS_COMPUTE_GRADIENTS = "_compute_gradients"


def is_keras2_dropout(dropout_class):
    """Is `dropout_class` Keras 2's Dropout (whose noise shape the NPU's dropout takes over), not Keras 3's?"""
    return hasattr(dropout_class, "_get_noise_shape")


def estimator_warm_start_settings(estimator):
    """The WarmStartSettings an Estimator was created with (None when none)."""
    return estimator._warm_start_settings


def estimator_config(estimator):
    """The RunConfig an Estimator keeps."""
    return estimator._config


def set_estimator_config(estimator, config):
    """Replace the RunConfig an Estimator keeps (and its model_dir where it keeps one of its own)."""
    estimator._config = config
    if hasattr(estimator, "_model_dir"):
        estimator._model_dir = config.model_dir


def set_run_config_session_config(run_config, session_config):
    """Replace a RunConfig's session_config in place (RunConfig has no setter; replace() makes a copy)."""
    run_config.__dict__["_session_config"] = session_config


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


def _v1_train():
    import tensorflow as tf

    return tf.compat.v1.train


def _adam():
    return _v1_train().AdamOptimizer(0.1)


def _ref_variable_class():
    from tensorflow.python.ops import ref_variable

    return ref_variable.RefVariable


def _a_queue_runner():
    import tensorflow as tf

    with tf_ops.Graph().as_default():
        queue = tf.queue.FIFOQueue(1, tf.float32)
        return _v1_train().QueueRunner(queue, [queue.enqueue(1.0)])


def _an_operation():
    graph = tf_ops.Graph()
    with graph.as_default():
        return tf_ops.convert_to_tensor(1.0).op


def _a_session():
    session = tf_session.Session(graph=tf_ops.Graph())
    session.close()
    return session


def _attribute(owner, name):
    """(owner, name) when `owner` has attribute `name`, else AttributeError naming it."""
    getattr(owner, name)
    return owner, name


def _keras2():
    """The Keras 2 the estimator faces patch: tf.keras on TF 2.15, tf_keras after."""
    import tensorflow as tf

    if is_keras2_dropout(tf.keras.layers.Dropout):
        return tf.keras
    import tf_keras

    return tf_keras


def _estimator_api():
    """tf.estimator on TF 2.15, npu_bridge's own Estimator after (estimator_support.ESTIMATOR)."""
    from npu_bridge.estimator.npu.estimator_support import ESTIMATOR

    return ESTIMATOR


def _an_estimator():
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return _estimator_api().Estimator(model_fn=lambda features, labels, mode: None, model_dir=folder)


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
    "Operation._update_input": lambda: tf_ops.Operation._update_input,
    "Operation._set_device": lambda: tf_ops.Operation._set_device,
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
    "Operation._set_attr": lambda: tf_ops.Operation._set_attr,
    "Graph._attr_scope": lambda: tf_ops.Graph._attr_scope,
    "RefVariable._ref": lambda: _ref_variable_class()._ref,
    "AdamOptimizer._get_beta_accumulators": lambda: _adam()._get_beta_accumulators,
    **{f"AdamOptimizer.{name}": (lambda name=name: _attribute(_adam(), name))
       for name in ("_beta1_t", "_beta2_t", "_epsilon_t", "_lr_t")},
    # What the tf.contrib optimizers and queue runners that subclass TensorFlow's read of their base class.
    **{f"Optimizer.{name}": (lambda name=name: getattr(_v1_train().Optimizer, name))
       for name in ("_prepare", "_apply_dense", "_resource_apply_dense", "_apply_sparse", "_resource_apply_sparse",
                    "_zeros_slot")},
    **{f"Optimizer instance.{name}": (lambda name=name: _attribute(_v1_train().GradientDescentOptimizer(0.1), name))
       for name in ("_use_locking", "_name")},
    **{f"QueueRunner.{name}": (lambda name=name: _attribute(_a_queue_runner(), name))
       for name in ("_lock", "_runs_per_session", "_queue_closed_exception_types", "_close_op",
                    "_exceptions_raised")},
    "keras legacy Optimizer._compute_gradients":
        lambda: getattr(_keras2().optimizers.legacy.Optimizer, KERAS_COMPUTE_GRADIENTS),
    "keras Dropout._get_noise_shape": lambda: _keras2().layers.Dropout._get_noise_shape,
    "Estimator._warm_start_settings": lambda: _attribute(_an_estimator(), "_warm_start_settings"),
    "Estimator._config": lambda: estimator_config(_an_estimator()),
    "RunConfig._session_config": lambda: _attribute(_estimator_api().RunConfig(), "_session_config"),
}

# Every `tensorflow.python` module the package imports from outside this module, with why there is no public
# spelling or why the internal one is used. tests/test_tf_private.py fails on an import of a module not listed
# here and imports each name taken from these modules, one test per name.
INTERNAL_MODULES = {
    "tensorflow.python.client": "session: BaseSession, the class activation patches (tf.compat.v1.Session's base), "
                                "and Session itself for the helpers that build one",
    "tensorflow.python.framework": "errors (tf.errors), dtypes, ops (Graph), tensor_util (constant_value, "
                                   "MakeNdarray: what the pass folds with), random_seed.get_seed, kernels and "
                                   "op_def_registry (the kernel and op registries the pass queries: no public API), "
                                   "tensor / indexed_slices (where TF 2.16 moved ops.Tensor and ops.IndexedSlices)",
    "tensorflow.python.framework.ops": "tf.contrib.framework's get_name_scope, as TF 1.15 exported it",
    "tensorflow.python.framework.tensor_util": "tf.contrib.util / framework.tensor_util's TF 1.15 names",
    "tensorflow.python.framework.smart_cond": "tf.contrib.framework.smart_cond, which was this function",
    "tensorflow.python.ops": "gen_*_ops (the raw kernels the TF 1.15 contrib optimizers and image ops call), "
                             "session_ops.TensorHandle (partial runs' handles), summary_ops_v2 (the summary writer's "
                             "initializer NPUEstimator runs), variables.Variable (ref and resource variables alike), "
                             "array_ops / check_ops (contrib's tensor_util)",
    "tensorflow.python.ops.data_flow_ops": "tf.contrib.staging.StagingArea",
    "tensorflow.python.ops.lookup_ops": "tf.contrib.lookup's TF 1.15 classes (HashTable, ...), no longer public",
    "tensorflow.python.ops.sort_ops": "tf.contrib.framework.sort / argsort",
    "tensorflow.python.ops.summary_ops_v2": "tf.contrib.summary, which was summary_ops_v2 itself",
    **{f"tensorflow.python.ops.distributions.{name}": "tf.contrib.distributions, TF 1.15's distribution classes"
       for name in ("bernoulli", "beta", "categorical", "dirichlet", "distribution", "exponential", "gamma",
                    "kullback_leibler", "laplace", "multinomial", "normal", "student_t", "uniform")},
    "tensorflow.python.platform": "tf_logging, the logger TensorFlow itself logs through (tf.compat.v1.logging)",
    "tensorflow.python.distribute": "distribute_lib: the functions of TF 1.15's distribution_strategy_context",
    "tensorflow.python.saved_model.model_utils": "export_utils: SavedModel signatures as tf.estimator exports them",
    "tensorflow.python.saved_model.model_utils.export_output": "tf.estimator.export's output classes",
    "tensorflow.python.tpu.ops": "tf.contrib.tpu.python.ops.tpu_ops",
    "tensorflow.python.tpu.tpu_function": "tf.contrib.tpu.python.tpu.tpu_function",
    "tensorflow.python.trackable.asset": "TF 1.15's tensorflow.python.training.tracking.tracking",
    "tensorflow.python.trackable.autotrackable": "TF 1.15's tensorflow.python.training.tracking.tracking",
    "tensorflow.python.trackable.resource": "TF 1.15's tensorflow.python.training.tracking.tracking",
    "tensorflow.python.trackable.base": "TF 1.15's tensorflow.python.training.tracking.base",
    "tensorflow.python.trackable.data_structures": "TF 1.15's tensorflow.python.training.tracking.data_structures",
    "tensorflow.python.training": "server_lib (the gRPC server of a multi-rank job), session_run_hook",
    "tensorflow.python.training.monitored_session": "tf.contrib.learn's monitored_session path (TF 1.15's module)",
    "tensorflow.python.training.checkpoint_utils": "tf.contrib.framework / training's checkpoint functions",
    "tensorflow.python.util": "nest (Session.run's fetch structures), deprecation.silence (TF's own deprecation "
                              "noise about our calls)",
    "tensorflow.python.util.nest": "tf.contrib.framework.nest, which was nest itself",
    "tensorflow.python.util.deprecation": "tf.contrib.framework's deprecated, deprecated_args and "
                                          "deprecated_arg_values decorators, which were these",
}
