"""`from npu_bridge.npu_init import *`: the exported surface and the config helpers scripts call."""
import threading

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

from npu_bridge import npu_init
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.estimator.npu.estimator_support import ESTIMATOR
from npu_bridge.tf1compat.estimator_paths import tensorflow_has_estimator

EXPORTED = """NPURunConfig ProfilingConfig DumpConfig NPUEstimator NPUEstimatorSpec NPUBroadcastGlobalVariablesHook
    NPUDistributedOptimizer npu_distributed_optimizer_wrapper NPUOptimizer NPULossScaleOptimizer
    FixedLossScaleManager ExponentialUpdateLossScaleManager npu_ops npu_scope util npu_plugin npu_unary_ops hccl_ops
    get_rank_size get_rank_id get_local_rank_size get_local_rank_id npu_config_proto npu_session_config_init
    npu_run_config_init npu_hooks_append npu_tf_optimizer set_keras_session_npu_config init_resource
    shutdown_resource close_session get_npu_rank_id get_npu_rank_size RewriterConfig config_pb2 rewriter_config_pb2
    os tf session session_run_hook npu_clear_session npu_allreduce NPUCheckpointSaverHook NPUOutputTensorHook
    NpuEmptyHook KerasDistributeOptimizer npu_keras_optimizer npu_strategy npu_close npu_graph_options
    npu_optimizer_options create_group destroy_group get_world_rank_from_group_rank get_group_rank_from_world_rank
    set_split_strategy_by_idx set_split_strategy_by_size DynamicInputConfig npu_rnn keras_to_npu
    NPUBroadcastGlobalVariablesCallback""".split()


@pytest.fixture
def star():
    namespace = {}
    exec("from npu_bridge.npu_init import *", namespace)
    return namespace


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def _npu_entry(config):
    entries = [e for e in config.graph_options.rewrite_options.custom_optimizers if e.name == "NpuOptimizer"]
    assert len(entries) == 1
    return entries[0]


def test_star_import_exports_the_real_surface(star):
    missing = [name for name in EXPORTED if name not in star]
    assert not missing
    assert star["RewriterConfig"] is RewriterConfig
    assert star["config_pb2"] is config_pb2 and star["rewriter_config_pb2"] is rewriter_config_pb2
    assert star["os"].path.join("a", "b") == "a/b"


def test_star_import_tf_is_the_v1_api(star):
    v1 = star["tf"]
    assert v1 is tf.compat.v1
    assert v1.Session is tf.compat.v1.Session and v1.placeholder is tf.compat.v1.placeholder


def test_npu_config_proto_creates_the_entry_and_turns_passes_off():
    config = npu_init.npu_config_proto()
    entry = _npu_entry(config)
    assert entry.parameter_map["use_off_line"].b
    rewrite = config.graph_options.rewrite_options
    assert rewrite.remapping == RewriterConfig.OFF
    assert rewrite.memory_optimization == RewriterConfig.OFF
    assert config.allow_soft_placement and not config.log_device_placement


def test_npu_config_proto_keeps_an_existing_entry_and_its_memory_optimization():
    config = tf.compat.v1.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
    result = npu_init.npu_config_proto(config_proto=config)
    assert result is config
    assert _npu_entry(config).parameter_map["precision_mode"].s == b"allow_mix_precision"
    assert config.graph_options.rewrite_options.memory_optimization == RewriterConfig.DEFAULT_MEM_OPT
    assert config.graph_options.rewrite_options.remapping == RewriterConfig.OFF


def test_npu_session_config_init_is_npu_config_proto():
    assert _npu_entry(npu_init.npu_session_config_init()).parameter_map["use_off_line"].b


def test_init_resource_returns_an_emulated_session_and_shutdown_op():
    from npu_bridge.runtime import last_report

    x = tf.compat.v1.placeholder(tf.float32, [2, 2])
    y = tf.matmul(x, x)
    sess, shutdown = npu_init.init_resource()
    try:
        assert _npu_entry(sess._config)
        np.testing.assert_allclose(sess.run(y, {x: np.eye(2)}), np.eye(2))
        assert last_report(sess) is not None
        npu_init.shutdown_resource(sess, shutdown)
    finally:
        npu_init.close_session(sess)
    assert sess._closed


def test_npu_hooks_append_adds_the_broadcast_hook():
    existing = tf.compat.v1.train.StopAtStepHook(last_step=1)
    hooks = npu_init.npu_hooks_append(hooks_list=[existing])
    assert hooks[0] is existing
    assert isinstance(hooks[1], npu_init.NPUBroadcastGlobalVariablesHook)
    assert isinstance(npu_init.npu_hooks_append()[0], tf.compat.v1.train.SessionRunHook)
    mine = [existing]
    assert npu_init.npu_hooks_append(mine) is mine and len(mine) == 2      # appended in place, as the real one does


def test_npu_clear_session_gives_keras_a_new_npu_session():
    """Run in a thread of its own: Keras' clear_session resets the default graph, which a script does at top level,
    outside this module's fresh_graph nesting (the default graph stack is per thread)."""
    backend = npu_init._keras_v1().backend
    found = {}

    def script():
        first = npu_init.set_keras_session_npu_config()
        second = npu_init.npu_clear_session()
        found.update(first=first, second=second, current=backend.get_session())
        backend.set_session(None)

    worker = threading.Thread(target=script)
    worker.start()
    worker.join()
    assert found["second"] is not found["first"] and found["current"] is found["second"]
    assert _npu_entry(found["second"]._config).parameter_map["use_off_line"].b


def test_npu_allreduce_on_one_rank_returns_the_gradients_dense():
    dense = tf.constant([1.0, 2.0])
    sparse = tf.IndexedSlices(tf.constant([[5.0]]), tf.constant([1]), tf.constant([2, 1]))
    reduced = npu_init.npu_allreduce([dense, sparse, None])
    assert reduced[2] is None and isinstance(reduced[1], tf.Tensor)
    with tf.compat.v1.Session() as sess:
        values = sess.run(reduced[:2])
    np.testing.assert_array_equal(values[0], [1.0, 2.0])
    np.testing.assert_array_equal(values[1], [[0.0], [5.0]])


def test_npu_tf_optimizer_forwards_to_the_wrapped_optimizer():
    w = tf.compat.v1.Variable(2.0)
    inner = tf.compat.v1.train.MomentumOptimizer(0.5, 0.9)
    opt = npu_init.npu_tf_optimizer(inner)
    assert isinstance(opt, npu_init.NPUDistributedOptimizer)
    train_op = opt.minimize(w * w)
    assert opt.get_slot(w, "momentum") is inner.get_slot(w, "momentum")
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train_op)
        assert sess.run(w) == pytest.approx(0.0)


def test_npu_optimizer_with_loss_scale_needs_a_manager():
    with pytest.raises(ValueError, match="loss_scale_manager"):
        npu_init.NPUOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1), is_loss_scale=True)
    opt = npu_init.NPUOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.5),
                                npu_init.FixedLossScaleManager(16), is_loss_scale=True)
    w = tf.compat.v1.Variable(2.0)
    train_op = opt.minimize(w * w)
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train_op)
        assert sess.run(w) == pytest.approx(0.0)


def test_distributed_optimizer_wrapper_is_identity_on_one_rank():
    opt = tf.compat.v1.train.AdamOptimizer()
    assert npu_init.npu_distributed_optimizer_wrapper(opt) is opt


def test_rank_queries_answer_for_one_rank(monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "1")
    monkeypatch.setenv("RANK_ID", "3")
    assert (npu_init.get_rank_size(), npu_init.get_rank_id()) == (1, 0)
    assert (npu_init.get_local_rank_size(), npu_init.get_local_rank_id()) == (1, 0)
    assert (npu_init.get_npu_rank_size(), npu_init.get_npu_rank_id()) == (1, 0)


@pytest.mark.parametrize("call", [
    lambda: npu_init.get_rank_size(),
    lambda: npu_init.npu_distributed_optimizer_wrapper(tf.compat.v1.train.GradientDescentOptimizer(0.1)),
    lambda: npu_init.npu_hooks_append(),
    lambda: npu_init.hccl_ops.allreduce(tf.constant(1.0), "sum"),
])
def test_a_multi_rank_job_without_a_rank_table_is_refused_clearly(monkeypatch, call):
    monkeypatch.setenv("RANK_SIZE", "8")
    monkeypatch.delenv("RANK_TABLE_FILE", raising=False)
    with pytest.raises(NpuConfigError, match="RANK_SIZE=8 but RANK_TABLE_FILE is not set"):
        call()


def test_set_keras_session_npu_config_makes_keras_use_an_npu_session():
    backend = npu_init._keras_v1().backend
    sess = npu_init.set_keras_session_npu_config()
    try:
        assert backend.get_session() is sess
        assert _npu_entry(sess._config).parameter_map["use_off_line"].b
    finally:
        backend.set_session(None)
        sess.close()


def test_npu_run_config_init_adds_the_entry_to_a_run_config():
    run_config = npu_init.npu_run_config_init(ESTIMATOR.RunConfig(model_dir="/tmp/x"))
    assert run_config.model_dir == "/tmp/x"
    assert _npu_entry(run_config.session_config).parameter_map["use_off_line"].b
    assert _npu_entry(npu_init.npu_run_config_init().session_config)


def test_estimator_helpers_build_on_the_estimator_of_this_tensorflow():
    """TensorFlow's own Estimator up to 2.15, npu_bridge's on later TensorFlow, which removed tf.estimator."""
    assert isinstance(npu_init.NPURunConfig(), ESTIMATOR.RunConfig)
    assert issubclass(npu_init.NPUEstimator, ESTIMATOR.Estimator)
    expected = "tensorflow_estimator" if tensorflow_has_estimator() else "npu_bridge.tf1compat.estimator"
    assert ESTIMATOR.Estimator.__module__.startswith(expected)


@pytest.mark.parametrize("module, symbols", [
    ("npu_bridge.estimator.npu_ops", ["dropout", "initialize_system", "shutdown_system"]),
    ("npu_bridge.estimator.npu.npu_config", ["NPURunConfig", "DumpConfig", "ProfilingConfig", "DynamicInputConfig"]),
    ("npu_bridge.estimator.npu.npu_estimator", ["NPUEstimator", "NPUEstimatorSpec"]),
    ("npu_bridge.estimator.npu.npu_optimizer", ["NPUDistributedOptimizer", "NPUOptimizer",
                                                "npu_distributed_optimizer_wrapper", "KerasDistributeOptimizer"]),
    ("npu_bridge.estimator.npu.npu_loss_scale_optimizer", ["NPULossScaleOptimizer"]),
    ("npu_bridge.estimator.npu.npu_loss_scale_manager", ["FixedLossScaleManager",
                                                         "ExponentialUpdateLossScaleManager"]),
    ("npu_bridge.estimator.npu.npu_scope", ["keep_dtype_scope", "without_npu_compile_scope"]),
    ("npu_bridge.estimator.npu.util", ["set_iteration_per_loop", "create_iteration_per_loop_var",
                                       "load_iteration_per_loop_var", "keep_tensors_dtypes", "IterationPerLoop",
                                       "set_graph_exec_config", "global_dict_init", "set_value", "get_value"]),
    ("npu_bridge.estimator.npu.npu_hook", ["NPUBroadcastGlobalVariablesHook", "NPUCheckpointSaverHook",
                                           "NPUOutputTensorHook"]),
    ("npu_bridge.estimator.npu.npu_plugin", ["set_device_sat_mode", "npu_close"]),
    ("npu_bridge.estimator.npu.npu_strategy", ["NPUStrategy"]),
    ("npu_bridge.estimator.npu.npu_rnn", ["npu_dynamic_rnn"]),
    ("npu_bridge.estimator.npu.npu_callbacks", ["NPUBroadcastGlobalVariablesCallback"]),
    ("npu_bridge.estimator.npu_unary_ops", ["gelu", "gelu_grad"]),
    ("npu_bridge.estimator.npu.npu_dynamic_rnn", ["DynamicRNN"]),
    ("npu_bridge.hccl.hccl_ops", ["allreduce", "broadcast", "allgather", "reduce_scatter", "reduce"]),
    ("hccl.manage.api", ["create_group", "destroy_group", "get_world_rank_from_group_rank",
                         "get_group_rank_from_world_rank", "get_rank_size", "get_rank_id"]),
    ("hccl.split.api", ["set_split_strategy_by_idx", "set_split_strategy_by_size"]),
])
def test_module_paths_of_real_scripts_import(module, symbols):
    imported = __import__(module, fromlist=symbols)
    assert all(callable(getattr(imported, symbol)) for symbol in symbols)


def test_keras_helpers_are_identities_on_one_rank(monkeypatch):
    callbacks = [object()]
    assert npu_init.npu_callbacks_append(callbacks) == callbacks
    optimizer = object()
    assert npu_init.npu_keras_optimizer(optimizer) is optimizer
    monkeypatch.setenv("RANK_SIZE", "2")
    with pytest.raises(NpuConfigError, match="RANK_SIZE=2"):
        npu_init.npu_keras_optimizer(optimizer)
