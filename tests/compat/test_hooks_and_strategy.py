"""Hooks, Keras optimizer wrapper, strategy and small helpers that ported scripts use after the star import."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge import npu_init
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.runtime import last_report

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def _mixed_config():
    config = npu_init.npu_config_proto()
    entry = config.graph_options.rewrite_options.custom_optimizers[0]
    entry.parameter_map["precision_mode"].s = b"allow_mix_precision"
    return config


def _train_step():
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    w = v1.get_variable("w", [3, 2], initializer=v1.ones_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    step = v1.train.get_or_create_global_step()
    return w, loss, v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)


def test_npu_checkpoint_saver_hook_writes_float32_checkpoints_that_restore(tmp_path):
    w, _, train = _train_step()
    hook = npu_init.NPUCheckpointSaverHook(str(tmp_path), save_steps=2)
    with v1.train.MonitoredSession(
            session_creator=v1.train.ChiefSessionCreator(config=_mixed_config()), hooks=[hook]) as sess:
        for _ in range(3):
            sess.run(train)
        trained = sess.run(w)
        assert "float16" in last_report(sess).summary()
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_dtype_map()["w"] == tf.float32
    assert reader.get_tensor("global_step") == 3
    np.testing.assert_array_equal(reader.get_tensor("w"), trained)


def test_npu_output_tensor_hook_hands_values_to_output_fn_every_n_steps_and_at_the_end():
    _, loss, train = _train_step()
    step = v1.train.get_global_step()
    seen = []
    hook = npu_init.NPUOutputTensorHook({"loss": loss, "step": step}, dependencies=train,
                                        output_fn=lambda outputs: seen.append([o["step"] for o in outputs]),
                                        output_every_n_steps=2)
    with v1.train.MonitoredSession(
            session_creator=v1.train.ChiefSessionCreator(config=_mixed_config()), hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(train)
    # The values are read after the training op (dependencies), so the first batch sees steps 1 and 2.
    assert seen == [[1, 2], [3, 4], [5]]


def test_npu_output_tensor_hook_reads_tensor_names_after_its_dependencies():
    _, loss, train = _train_step()
    seen = []
    hook = npu_init.NPUOutputTensorHook({"loss": loss.name}, dependencies=train, output_fn=seen.extend,
                                        output_every_n_steps=1)
    with v1.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(train)
    assert isinstance(seen[0]["loss"], np.floating)


def test_npu_output_tensor_hook_without_output_fn_logs_the_values(caplog):
    import logging

    _, loss, train = _train_step()
    hook = npu_init.NPUOutputTensorHook({"loss": loss})
    with caplog.at_level(logging.INFO, logger="tensorflow"), v1.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(train)
    assert any(record.getMessage().startswith("NPUOutputTensorHook: loss = ") for record in caplog.records)


def test_npu_output_tensor_hook_with_no_interval_reports_once_at_the_end():
    _, loss, train = _train_step()
    seen = []
    hook = npu_init.NPUOutputTensorHook([loss], output_fn=seen.append)
    with v1.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(3):
            sess.run(train)
    assert len(seen) == 1 and len(seen[0]) == 3 and list(seen[0][0]) == [loss.name]


def test_npu_output_tensor_hook_rejects_bad_arguments():
    with pytest.raises(ValueError, match="output_every_n_steps must be an int >= 0, got -1"):
        npu_init.NPUOutputTensorHook({}, output_every_n_steps=-1)
    with pytest.raises(ValueError, match="output_fn must be callable, got str"):
        npu_init.NPUOutputTensorHook({}, output_fn="print")


def test_npu_empty_hook_is_a_hook_that_does_nothing():
    _, _, train = _train_step()
    with v1.train.MonitoredSession(hooks=[npu_init.NpuEmptyHook()]) as sess:
        sess.run(train)
    assert isinstance(npu_init.NpuEmptyHook(), v1.train.SessionRunHook)


def test_keras_distribute_optimizer_is_the_wrapped_optimizer_on_one_rank(monkeypatch):
    optimizer = object()
    assert npu_init.KerasDistributeOptimizer(optimizer) is optimizer
    assert npu_init.npu_keras_optimizer(optimizer) is optimizer
    monkeypatch.setenv("RANK_SIZE", "4")
    with pytest.raises(NpuConfigError, match="RANK_SIZE=4 but RANK_TABLE_FILE is not set"):
        npu_init.KerasDistributeOptimizer(optimizer)
    with pytest.raises(NpuConfigError, match="RANK_SIZE=4 but RANK_TABLE_FILE is not set"):
        npu_init.npu_keras_optimizer(optimizer)


def test_npu_strategy_trains_on_the_host_cpu():
    strategy = npu_init.npu_strategy.NPUStrategy()
    assert strategy.num_replicas_in_sync == 1
    with strategy.scope():
        w = v1.get_variable("w", [3, 2], initializer=v1.ones_initializer())

        def step():
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.ones([4, 3]), w)))
            with tf.control_dependencies([v1.train.GradientDescentOptimizer(0.1).minimize(loss)]):
                return tf.identity(loss)

        loss = strategy.experimental_local_results(strategy.run(step))[0]
    with v1.Session(config=_mixed_config()) as sess:
        sess.run(v1.global_variables_initializer())
        losses = [sess.run(loss) for _ in range(3)]
        assert "float16" in last_report(sess).summary()
    assert losses[2] < losses[1] < losses[0]
    with pytest.raises(ValueError, match='only supports "/cpu:0", got \'/gpu:0\''):
        npu_init.npu_strategy.NPUStrategy("/gpu:0")


def test_graph_and_optimizer_option_helpers_turn_xla_off():
    off = v1.OptimizerOptions.OFF
    assert npu_init.npu_graph_options().optimizer_options.global_jit_level == off
    options = v1.GraphOptions(optimizer_options=v1.OptimizerOptions(global_jit_level=v1.OptimizerOptions.ON_1))
    assert npu_init.npu_graph_options(options) is options and options.optimizer_options.global_jit_level == off
    assert npu_init.npu_optimizer_options().global_jit_level == off


def test_util_value_store_and_graph_exec_config():
    npu_init.util.global_dict_init()
    npu_init.util.set_value("npu_rank_id", 0)
    assert npu_init.util.get_value("npu_rank_id") == 0
    assert npu_init.util.get_value("missing", 7) == 7
    npu_init.util.global_dict_init()
    assert npu_init.util.get_value("npu_rank_id") is None
    sess, shutdown = npu_init.init_resource()
    try:
        assert [npu_init.util.get_value(key) for key in ("npu_rank_id", "npu_local_rank_id", "npu_rank_size")] \
            == [0, 0, 1]
    finally:
        npu_init.shutdown_resource(sess, shutdown)
        npu_init.close_session(sess)
    _, loss, train = _train_step()
    assert npu_init.util.set_graph_exec_config(train, dynamic_input=True) is train
    with pytest.raises(ValueError, match="fetch must be an Operation, Tensor, tensor name, list or tuple, got int"):
        npu_init.util.set_graph_exec_config(3)
    assert npu_init.npu_close() is None


def test_broadcast_callback_lets_a_keras_model_fit_on_one_rank(monkeypatch):
    keras = npu_init._keras_v1()
    sess = npu_init.set_keras_session_npu_config()
    try:
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
        model.compile(optimizer="sgd", loss="mse")
        callback = npu_init.NPUBroadcastGlobalVariablesCallback(0)
        assert isinstance(callback, keras.callbacks.Callback)
        x = np.ones((8, 3), np.float32)
        history = model.fit(x, x[:, :1], epochs=2, verbose=0, callbacks=[callback])
        assert len(history.history["loss"]) == 2
    finally:
        keras.backend.set_session(None)
        sess.close()
    with pytest.raises(ValueError, match="root_rank 1 does not exist"):
        npu_init.NPUBroadcastGlobalVariablesCallback(1)
    monkeypatch.setenv("RANK_SIZE", "8")
    with pytest.raises(NpuConfigError, match="RANK_SIZE=8 but RANK_TABLE_FILE is not set"):
        npu_init.NPUBroadcastGlobalVariablesCallback(0)
