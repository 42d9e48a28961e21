"""tf.compat.v1 session semantics a ported script relies on, checked against the values a real NPU returns."""
import collections
import threading

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.npu_init import npu_config_proto
from npu_bridge.runtime import last_report

from npu_test_support import fp16

from .conftest import fp16_matmul, is_emulated, ported_config

A = np.full((2, 3), 1 / 3, np.float32)
B = np.array([[0.1, 1 / 3], [0.7, 1 / 7], [2 / 3, 0.9]], np.float32)
Outputs = collections.namedtuple("Outputs", "logits loss")


def _model():
    x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    logits = tf.matmul(x, tf.constant(B), name="logits")
    hidden = tf.nn.relu(logits, name="hidden")
    loss = tf.reduce_sum(tf.matmul(hidden, tf.constant(B[:2].T), name="second"), name="loss")
    return x, logits, hidden, loss


def test_nested_fetches_namedtuple_dict_ops_and_names(graph):
    x, logits, _, loss = _model()
    with tf.compat.v1.Session(config=ported_config()) as sess:
        out = sess.run({"outputs": Outputs(logits, loss), "by_name": ["logits:0", (loss.op,)]}, {"x:0": A})
    assert isinstance(out["outputs"], Outputs)
    np.testing.assert_array_equal(out["outputs"].logits, fp16_matmul(A, B))
    assert out["outputs"].logits.dtype == np.float32
    np.testing.assert_array_equal(out["by_name"][0], out["outputs"].logits)
    assert out["by_name"][1] == (None,)


def test_feeding_an_intermediate_tensor_replaces_its_producer(graph):
    x, logits, hidden, loss = _model()
    fed = np.array([[-1.0, 1 / 3], [0.5, -0.25]], np.float32)
    with tf.compat.v1.Session(config=ported_config()) as sess:
        from_fed = sess.run([hidden, loss], {logits: fed})
    # hidden follows logits into float16 on the NPU, so the fed value is rounded like the tensor it replaces
    np.testing.assert_array_equal(from_fed[0], np.maximum(fp16(fed), 0))
    expected = fp16_matmul(np.maximum(fp16(fed), 0), B[:2].T).sum()
    assert from_fed[1] == pytest.approx(expected, rel=1e-3)


def test_sparse_tensor_fetch_of_an_emulated_result(graph):
    x, logits, _, _ = _model()
    sparse = tf.sparse.from_dense(tf.nn.relu(logits - 0.3))
    with tf.compat.v1.Session(config=ported_config()) as sess:
        value = sess.run(sparse, {x: A})
    assert isinstance(value, tf.compat.v1.SparseTensorValue)
    dense = np.maximum(fp16_matmul(A, B) - 0.3, 0)
    np.testing.assert_array_equal(value.indices, np.argwhere(dense > 0))
    np.testing.assert_allclose(value.values, dense[dense > 0], rtol=1e-3)
    np.testing.assert_array_equal(value.dense_shape, [2, 2])


def test_run_metadata_partition_graphs_and_step_stats(graph):
    x, logits, _, _ = _model()
    with tf.compat.v1.Session(config=ported_config()) as sess:
        metadata = tf.compat.v1.RunMetadata()
        options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE,
                                          output_partition_graphs=True)
        sess.run(logits, {x: A}, options=options, run_metadata=metadata)
    executed = {node.name: node for g in metadata.partition_graphs for node in g.node}
    half = tf.float16.as_datatype_enum
    assert any(n.op == "Cast" and n.attr["DstT"].type == half for n in executed.values())
    timed = {stat.node_name for dev in metadata.step_stats.dev_stats for stat in dev.node_stats}
    assert "logits" in timed


def test_threads_run_while_the_main_thread_adds_ops(graph):
    x, logits, _, _ = _model()
    failures = []
    with tf.compat.v1.Session(config=ported_config()) as sess:
        def worker(seed):
            rng = np.random.default_rng(seed)
            for step in range(15):
                data = rng.random((2, 3), dtype=np.float32)
                fetches = {"l": [logits]} if step % 2 else logits
                out = sess.run(fetches, {x: data})
                value = out["l"][0] if step % 2 else out
                if not np.array_equal(value, fp16_matmul(data, B)):
                    failures.append((seed, step))

        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(3)]
        for thread in threads:
            thread.start()
        for k in range(4):
            scaled = tf.multiply(logits, float(k), name=f"scaled_{k}")
            np.testing.assert_array_equal(sess.run(scaled, {x: A}), fp16(fp16_matmul(A, B) * k))
        for thread in threads:
            thread.join()
    assert not failures


def test_sessions_with_different_options_share_a_growing_graph(graph):
    x, logits, _, _ = _model()
    mixed = tf.compat.v1.Session(config=ported_config("allow_mix_precision"))
    origin = tf.compat.v1.Session(config=ported_config("must_keep_origin_dtype"))
    plain = tf.compat.v1.Session()
    try:
        for step in range(2):
            if step:
                logits = tf.identity(logits * 2.0, name="grown")
            factor = 2.0 if step else 1.0
            np.testing.assert_array_equal(mixed.run(logits, {x: A}), fp16_matmul(A, B) * factor)
            np.testing.assert_array_equal(origin.run(logits, {x: A}), plain.run(logits, {x: A}))
        assert "must_keep_origin_dtype" in last_report(origin).summary()
        assert is_emulated(mixed) and is_emulated(origin) and not is_emulated(plain)
    finally:
        for sess in (mixed, origin, plain):
            sess.close()


def test_finalized_graph_under_a_monitored_session(graph):
    x, logits, _, loss = _model()
    v = tf.compat.v1.get_variable("v", initializer=1.0)
    bump = tf.compat.v1.assign_add(v, 1.0)
    with tf.compat.v1.train.SingularMonitoredSession(config=ported_config()) as sess:
        assert graph.finalized
        assert sess.run(bump) == 2.0
        np.testing.assert_array_equal(sess.run(logits, {x: A}), fp16_matmul(A, B))


def test_session_created_first_then_graph_built_variables_and_optimizer_added_between_runs(graph):
    sess = tf.compat.v1.Session(config=ported_config())
    try:
        w = tf.compat.v1.get_variable("w", initializer=B)
        sess.run(w.initializer)
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        logits = tf.matmul(x, w, name="logits")
        np.testing.assert_array_equal(sess.run(logits, {x: A}), fp16_matmul(A, B))
        loss = tf.reduce_sum(tf.square(logits))
        train = tf.compat.v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
        slots = [v for v in tf.compat.v1.global_variables() if "Momentum" in v.op.name]
        sess.run(tf.compat.v1.variables_initializer(slots))
        np.testing.assert_array_equal(sess.run(w), B)
        before = sess.run(loss, {x: A})
        sess.run(train, {x: A})
        assert sess.run(loss, {x: A}) < before
        assert not np.array_equal(sess.run(w), B)
    finally:
        sess.close()


def test_uninitialized_variable_error_names_the_users_variable(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="features")
    weights = tf.compat.v1.get_variable("dense_kernel", [2, 3])
    logits = tf.matmul(x, weights, name="logits")
    with tf.compat.v1.Session(config=ported_config()) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as caught:
            sess.run(logits, {x: np.ones((1, 2))})
    message = caught.value.message
    assert "dense_kernel" in message
    assert "NpuBridge" not in message and "ArithmeticOptimizer" not in message
    assert caught.value.op is not None and caught.value.op.graph is graph


def test_eval_and_run_under_default_and_interactive_sessions(graph):
    x, logits, _, _ = _model()
    v = tf.compat.v1.get_variable("v", initializer=0.5)
    bump = tf.compat.v1.assign_add(v, 0.25).op
    sess = tf.compat.v1.Session(config=ported_config())
    with sess.as_default():
        v.initializer.run()
        bump.run()
        assert v.eval() == 0.75
        np.testing.assert_array_equal(logits.eval({x: A}), fp16_matmul(A, B))
    sess.close()
    interactive = tf.compat.v1.InteractiveSession(config=ported_config())
    try:
        assert tf.compat.v1.get_default_session() is interactive and is_emulated(interactive)
        np.testing.assert_array_equal(logits.eval({x: A}), fp16_matmul(A, B))
    finally:
        interactive.close()


def _plain_value(fetch, feed):
    with tf.compat.v1.Session() as reference:
        return reference.run(fetch, feed)


def test_use_off_line_false_and_configs_without_npu_optimizer_are_plain_tensorflow(graph, tmp_path):
    x, logits, _, _ = _model()
    exact = _plain_value(logits, {x: A})
    assert not np.array_equal(exact, fp16_matmul(A, B))
    host = npu_config_proto()
    host.graph_options.rewrite_options.custom_optimizers[0].parameter_map["use_off_line"].b = False
    other = tf.compat.v1.ConfigProto()
    other.graph_options.rewrite_options.custom_optimizers.add(name="pruning")
    for config in (host, other, tf.compat.v1.ConfigProto(), None):
        with tf.compat.v1.Session(config=config) as sess:
            assert not is_emulated(sess)
            np.testing.assert_array_equal(sess.run(logits, {x: A}), exact)
    tf.compat.v1.train.get_or_create_global_step()
    with tf.compat.v1.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=None,
                                                     log_step_count_steps=None) as sess:
        assert not is_emulated(sess)
        np.testing.assert_array_equal(sess.run(logits, {x: A}), exact)
    with pytest.raises(ValueError, match="NpuOptimizer"):
        last_report(sess)
