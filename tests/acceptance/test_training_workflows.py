"""A ported ModelZoo training script's life cycle on the emulated NPU: input pipelines, hooks, checkpoints that
move between emulated and plain sessions, control flow with float16 values checked exactly."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.runtime import last_report

from .conftest import fp16_matmul, is_emulated, ported_config

X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)


def _regression(use_resource=False, optimizer=None):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer(0.1),
                                  use_resource=use_resource)
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w, name="predict") - 1.0), name="loss")
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = optimizer or tf.compat.v1.train.GradientDescentOptimizer(0.5)
    return w, loss, global_step, optimizer.minimize(loss, global_step=global_step)


def test_monitored_training_session_hooks_see_emulated_values_and_checkpoint_restores_in_plain_session(tmp_path):
    seen = []

    class RecordLoss(tf.compat.v1.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.compat.v1.train.SessionRunArgs({"loss": "loss:0", "step": global_step})

        def after_run(self, run_context, run_values):
            seen.append(run_values.results)

    with tf.Graph().as_default():
        w, loss, global_step, train = _regression()
        hooks = [RecordLoss(), tf.compat.v1.train.StopAtStepHook(last_step=5), tf.compat.v1.train.NanTensorHook(loss),
                 tf.compat.v1.train.LoggingTensorHook({"loss": loss}, every_n_iter=2)]
        with tf.compat.v1.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), config=ported_config(), hooks=hooks, save_checkpoint_steps=5,
                save_summaries_steps=2, log_step_count_steps=1) as sess:
            while not sess.should_stop():
                sess.run(train)
            assert is_emulated(sess)
            assert last_report(sess).by_name("predict").decision == "float16"
    assert [r["step"] for r in seen] == [1, 2, 3, 4, 5]
    assert seen[-1]["loss"] < seen[0]["loss"]
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", [2, 1])
        global_step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.Session() as plain:
            tf.compat.v1.train.Saver().restore(plain, tf.train.latest_checkpoint(str(tmp_path)))
            assert not is_emulated(plain)
            assert plain.run(global_step) == 5
            np.testing.assert_array_equal(plain.run(w), tf.train.load_variable(str(tmp_path), "w"))


@pytest.mark.parametrize("save_on_npu", [True, False], ids=["emulated-to-plain", "plain-to-emulated"])
def test_saver_round_trip_with_adam_slots_resumes_exactly(tmp_path, save_on_npu):
    path = str(tmp_path / "model.ckpt")
    save_config, restore_config = (ported_config(), None) if save_on_npu else (None, ported_config())
    with tf.Graph().as_default():
        w, loss, _, train = _regression(use_resource=True, optimizer=tf.compat.v1.train.AdamOptimizer(0.1))
        with tf.compat.v1.Session(config=save_config) as sess:
            assert is_emulated(sess) == save_on_npu
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            tf.compat.v1.train.Saver().save(sess, path)
            saved = sess.run(w)
    stored = dict(tf.train.list_variables(path))
    assert {"w", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power", "global_step"} <= set(stored)
    assert all(tf.train.load_variable(path, name).dtype in (np.float32, np.int64) for name in stored)
    with tf.Graph().as_default():
        w, loss, global_step, train = _regression(use_resource=True, optimizer=tf.compat.v1.train.AdamOptimizer(0.1))
        with tf.compat.v1.Session(config=restore_config) as sess:
            assert is_emulated(sess) != save_on_npu
            tf.compat.v1.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), saved)
            assert sess.run(global_step) == 3
            before = sess.run(loss)
            sess.run(train)
            assert sess.run(global_step) == 4
            assert sess.run(loss) < before


def test_initializable_iterator_fed_from_placeholders_trains_and_reinitializes(graph):
    features = tf.compat.v1.placeholder(tf.float32, [None, 4], name="features")
    labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(4).repeat()
    iterator = tf.compat.v1.data.make_initializable_iterator(dataset)
    batch_x, batch_y = iterator.get_next()
    w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.matmul(batch_x, w, name="logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(batch_y, logits)
    train = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
    rng = np.random.default_rng(0)
    data_x = rng.random((8, 4), dtype=np.float32)
    data_y = np.argmax(data_x[:, :3], axis=1)
    with tf.compat.v1.Session(config=ported_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(iterator.initializer, {features: data_x, labels: data_y})
        first_batch = sess.run(batch_x)
        np.testing.assert_array_equal(first_batch, data_x[:4])
        losses = [sess.run([loss, train])[0] for _ in range(20)]
        sess.run(iterator.initializer, {features: data_x[::-1], labels: data_y[::-1]})
        np.testing.assert_array_equal(sess.run(batch_x), data_x[::-1][:4])
        assert last_report(sess).by_name("logits").decision == "float16"
    assert losses[-1] < losses[0]


def test_queue_runners_with_coordinator_feed_an_emulated_matmul(graph):
    data = np.arange(20, dtype=np.float32).reshape(10, 2) / 3
    [row] = tf.compat.v1.train.slice_input_producer([tf.constant(data)], shuffle=False)
    batch = tf.compat.v1.train.batch([row], batch_size=4, num_threads=1)
    weights = np.array([[1 / 3], [2 / 3]], np.float32)
    out = tf.matmul(batch, tf.constant(weights), name="out")
    with tf.compat.v1.Session(config=ported_config()) as sess:
        sess.run(tf.compat.v1.local_variables_initializer())
        coord = tf.compat.v1.train.Coordinator()
        threads = tf.compat.v1.train.start_queue_runners(sess=sess, coord=coord)
        first, second = sess.run(out), sess.run(out)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    np.testing.assert_array_equal(first, fp16_matmul(data[:4], weights))
    np.testing.assert_array_equal(second, fp16_matmul(data[4:8], weights))


def test_while_loop_and_cond_under_mixed_float16_round_every_matmul(graph):
    start = np.full((2, 2), 1 / 3, np.float32)
    w_value = np.array([[1 / 3, 0.2], [0.7, 1 / 7]], np.float32)
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    w = tf.constant(w_value)
    _, looped = tf.compat.v1.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, w)), [0, x])
    flag = tf.compat.v1.placeholder(tf.bool, [], name="flag")
    chosen = tf.compat.v1.cond(flag, lambda: tf.matmul(looped, w), lambda: looped + 1.0)
    expected = start
    for _ in range(3):
        expected = fp16_matmul(expected, w_value)
    with tf.compat.v1.Session(config=ported_config()) as sess:
        np.testing.assert_array_equal(sess.run(looped, {x: start}), expected)
        np.testing.assert_array_equal(sess.run(chosen, {x: start, flag: True}), fp16_matmul(expected, w_value))
        np.testing.assert_allclose(sess.run(chosen, {x: start, flag: False}), expected + 1.0, rtol=1e-3)
    plain_value = start @ w_value @ w_value @ w_value
    assert not np.allclose(expected, plain_value, rtol=0, atol=1e-6), "the test data must show float16 rounding"


def test_gradients_through_while_loop_and_cond_match_float32_within_float16_tolerance(graph):
    w = tf.compat.v1.get_variable("w", initializer=np.full((2, 2), 0.5, np.float32), use_resource=True)
    _, power = tf.compat.v1.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, w)),
                                       [0, tf.eye(2)])
    use_loop = tf.compat.v1.placeholder_with_default(True, [])
    total = tf.compat.v1.cond(use_loop, lambda: tf.reduce_sum(power), lambda: tf.reduce_sum(w))
    grad = tf.gradients(total, w)[0]
    results = {}
    for name, config in (("npu", ported_config()), ("plain", None)):
        with tf.compat.v1.Session(config=config) as sess:
            sess.run(w.initializer)
            results[name] = sess.run([total, grad])
            assert is_emulated(sess) == (name == "npu")
    np.testing.assert_allclose(results["npu"][0], results["plain"][0], rtol=1e-3)
    np.testing.assert_allclose(results["npu"][1], results["plain"][1], rtol=1e-3)


def test_summaries_py_func_and_lookup_tables_run_emulated(graph, tmp_path):
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    y = tf.matmul(x, x, name="y")
    doubled = tf.compat.v1.py_func(lambda a: (a * 2).astype(np.float32), [y], tf.float32)
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["cat", "dog"], [1, 2]), -1)
    ids = table.lookup(tf.constant(["dog", "bird"]))
    tf.compat.v1.summary.scalar("y_sum", tf.reduce_sum(y))
    merged = tf.compat.v1.summary.merge_all()
    data = np.full((2, 2), 1 / 3, np.float32)
    with tf.compat.v1.Session(config=ported_config()) as sess:
        sess.run(tf.compat.v1.tables_initializer())
        value, looked_up, summary = sess.run([doubled, ids, merged], {x: data})
    np.testing.assert_array_equal(value, 2 * fp16_matmul(data, data))
    np.testing.assert_array_equal(looked_up, [2, -1])
    parsed = tf.compat.v1.Summary.FromString(summary)
    assert parsed.value[0].tag == "y_sum"
    assert parsed.value[0].simple_value == pytest.approx(float(fp16_matmul(data, data).sum()), rel=1e-3)
