"""TF1 program structure on the emulated NPU: control flow, input pipelines, queues, savers, monitored sessions."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.runtime import last_report

from .conftest import npu_config


def test_while_loop_and_cond(graph):
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    w_value = np.array([[0.5, 0.25], [1 / 3, 1.0]], np.float32)
    w = tf.constant(w_value)
    _, looped = tf.compat.v1.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, w)), [0, x])
    flag = tf.compat.v1.placeholder(tf.bool, [], name="flag")
    chosen = tf.compat.v1.cond(flag, lambda: looped * 2.0, lambda: looped - 1.0)
    start = np.eye(2, dtype=np.float32)
    expected = start @ np.linalg.matrix_power(w_value, 3)
    with tf.compat.v1.Session(config=npu_config()) as sess:
        high, low = sess.run(chosen, {x: start, flag: True}), sess.run(chosen, {x: start, flag: False})
    np.testing.assert_allclose(high, expected * 2, rtol=2e-3)
    np.testing.assert_allclose(low, expected - 1, rtol=2e-3, atol=2e-3)


def test_dataset_iterators(graph):
    data = np.arange(12, dtype=np.float32).reshape(6, 2) / 7
    one_shot = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(data).batch(3))
    batch = one_shot.get_next()
    limit = tf.compat.v1.placeholder(tf.int64, [], name="limit")
    resettable = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.range(limit).map(lambda i: i * 2))
    item = resettable.get_next()
    with tf.compat.v1.Session(config=npu_config()) as sess:
        np.testing.assert_allclose(sess.run(batch), data[:3])
        np.testing.assert_allclose(sess.run(batch), data[3:])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(batch)
        sess.run(resettable.initializer, {limit: 2})
        assert [sess.run(item), sess.run(item)] == [0, 2]
        sess.run(resettable.initializer, {limit: 1})
        assert sess.run(item) == 0


def test_queue_runners_fill_a_queue_in_background_threads(graph):
    queue = tf.queue.FIFOQueue(10, tf.float32, shapes=[2])
    enqueue = queue.enqueue(tf.random.uniform([2]))
    tf.compat.v1.train.add_queue_runner(tf.compat.v1.train.QueueRunner(queue, [enqueue] * 2))
    batch = queue.dequeue_many(4)
    with tf.compat.v1.Session(config=npu_config()) as sess:
        coord = tf.compat.v1.train.Coordinator()
        threads = tf.compat.v1.train.start_queue_runners(sess=sess, coord=coord)
        value = sess.run(batch)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert value.shape == (4, 2)
    assert ((value >= 0) & (value < 1)).all()


def _regression_graph():
    x = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2))
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer(0.1))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    train = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
    return w, loss, train


def _saver_round_trip(tmp_path, save_config, restore_config):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        w, _, train = _regression_graph()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(config=save_config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            saved = sess.run(w)
            saver.save(sess, path)
    assert tf.train.load_variable(path, "w").dtype == np.float32
    with tf.Graph().as_default():
        w, _, _ = _regression_graph()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(config=restore_config) as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), saved)


def test_saver_checkpoints_from_the_npu_restore_in_plain_tensorflow(tmp_path):
    _saver_round_trip(tmp_path, npu_config(), None)


def test_saver_checkpoints_from_plain_tensorflow_restore_on_the_npu(tmp_path):
    _saver_round_trip(tmp_path, None, npu_config())


def test_monitored_training_session_checkpoints_and_resumes(tmp_path):
    for expected_step in (4, 8):
        with tf.Graph().as_default():
            _, loss, train = _regression_graph()
            with tf.compat.v1.train.MonitoredTrainingSession(
                    checkpoint_dir=str(tmp_path), config=npu_config(), save_summaries_steps=None,
                    save_checkpoint_secs=None, save_checkpoint_steps=2, log_step_count_steps=None) as sess:
                first = sess.run(loss)
                for _ in range(4):
                    sess.run(train)
                last = sess.run(loss)
                assert "mixed_float16" in last_report(sess).summary()
            assert last < first
        assert tf.train.load_variable(str(tmp_path), "global_step") == expected_step


def test_singular_monitored_session_and_monitored_session(graph):
    w, loss, train = _regression_graph()
    with tf.compat.v1.train.SingularMonitoredSession(config=npu_config()) as sess:
        sess.run(train)
        assert sess.raw_session()._npu_emulation is not None
    creator = tf.compat.v1.train.ChiefSessionCreator(config=npu_config())
    with tf.compat.v1.train.MonitoredSession(session_creator=creator) as sess:
        first = sess.run(loss)
        sess.run(train)
        assert sess.run(loss) < first


def test_frozen_graph_and_saved_model_hold_float32_values(graph, tmp_path):
    w, loss, train = _regression_graph()
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train)
        trained = sess.run(w)
        frozen = tf.compat.v1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), [w.op.name])
        scale = tf.compat.v1.placeholder_with_default(1.0, [], name="scale")
        tf.compat.v1.saved_model.simple_save(sess, str(tmp_path / "saved"), {"scale": scale}, {"w": w * scale})
    constant = next(n for n in frozen.node if n.name == w.op.name)
    np.testing.assert_array_equal(tf.make_ndarray(constant.attr["value"].tensor), trained)
    with tf.Graph().as_default(), tf.compat.v1.Session() as plain:
        tf.compat.v1.saved_model.loader.load(plain, ["serve"], str(tmp_path / "saved"))
        np.testing.assert_array_equal(plain.run("w:0"), trained)
