"""A value fed into a tensor the NPU holds in float16 reaches every reader rounded, as the NPU would hold it."""
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.runtime import last_report
from npu_test_support import fp16

from .conftest import npu_config


def test_fed_pool_output_reaches_float32_readers_rounded(graph):
    x = tf.compat.v1.placeholder(tf.float32, [1, 4, 4, 1], name="x")
    conv = tf.nn.conv2d(x, tf.ones([1, 1, 1, 1]), 1, "SAME", name="conv")
    pool = tf.nn.max_pool2d(tf.nn.relu(conv), 2, 2, "VALID", name="pool")
    # Sum is black on the Ascend 910: it reads MaxPool's value in float32 (the pass lets it read the raw output).
    total = tf.reduce_sum(pool, name="total")
    fed = np.full([1, 2, 2, 1], 0.1, np.float32)
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        got = sess.run(total, {pool: fed})
        partial = sess.partial_run_setup([total], [pool])
        got_partial = sess.partial_run(partial, total, {pool: fed})
    want = np.float32(fp16(fed).sum())
    assert fp16(0.1) != np.float32(0.1)
    assert got == want and got_partial == want


def test_fed_widening_cast_reaches_the_readers_that_skip_it(graph):
    """Softmax follows float16 through the user's fp16 -> fp32 Cast and reads the float16 MatMul before it (the
    same values, one Cast fewer): a value fed to the Cast's output must still reach it, as in plain TensorFlow."""
    x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
    product = tf.matmul(tf.cast(x, tf.float16), tf.constant(np.eye(4, dtype=np.float16)), name="m16")
    widened = tf.cast(product, tf.float32, name="c32")
    softmax = tf.nn.softmax(widened, name="sm")
    feeds = {x: np.arange(8, dtype=np.float32).reshape(2, 4), widened: np.zeros((2, 4), np.float32)}
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        assert last_report(sess).by_name("sm").decision == "float16"
        got = sess.run(softmax, feeds)
        only_cast = sess.run(softmax, {widened: np.zeros((2, 4), np.float32)})
    np.testing.assert_array_equal(got, np.full((2, 4), 0.25, np.float32))
    np.testing.assert_array_equal(only_cast, got)


def _training_graph():
    rng = np.random.default_rng(0)
    x = tf.compat.v1.placeholder(tf.float32, [8, 6], name="x")
    labels = tf.compat.v1.placeholder(tf.int32, [8], name="labels")
    w1 = tf.compat.v1.Variable(rng.normal(size=(6, 8)).astype(np.float32) * 0.5, name="w1")
    w2 = tf.compat.v1.Variable(rng.normal(size=(8, 3)).astype(np.float32) * 0.5, name="w2")
    hidden = tf.tanh(tf.nn.relu(tf.matmul(x, w1)), name="hidden")
    rounded = tf.cast(tf.cast(hidden, tf.float16, name="c16"), tf.float32, name="c32")
    logits = tf.matmul(rounded, w2, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits), name="loss")
    fetches = [loss, *tf.gradients(loss, [w1, w2])]
    feeds = {x: rng.normal(size=(8, 6)).astype(np.float32), labels: np.arange(8) % 3}
    return fetches, feeds


def test_every_float_tensor_of_a_training_graph_can_be_fed(graph):
    """Feeding any intermediate tensor changes the results as in plain TensorFlow (up to float16 rounding), in
    every mode that moves readers around: never silently ignored."""
    fetches, feeds = _training_graph()
    candidates = [t for op in graph.get_operations() for t in op.outputs
                  if t.dtype in (tf.float32, tf.float16) and op.type not in ("VariableV2", "Const", "Placeholder")
                  and graph.is_feedable(t) and t.shape.is_fully_defined()]
    assert len(candidates) > 20
    init = tf.compat.v1.global_variables_initializer()
    sessions = {"plain": tf.compat.v1.Session()}
    for v1 in ("allow_mix_precision", "force_fp16"):
        sessions[v1] = tf.compat.v1.Session(config=npu_config(None, precision_mode=v1))
    for sess in sessions.values():
        sess.run(init)
    try:
        for tensor in candidates:
            value = np.random.default_rng(5).uniform(0.25, 0.75, tensor.shape).astype(tensor.dtype.as_numpy_dtype)
            want = sessions["plain"].run(fetches, {**feeds, tensor: value})
            untouched = sessions["plain"].run(fetches, feeds)
            for name in ("allow_mix_precision", "force_fp16"):
                got = sessions[name].run(fetches, {**feeds, tensor: value})
                for expected, actual, before in zip(want, got, untouched):
                    scale = np.abs(expected).max() + 1e-3
                    # float16 keeps 11 significant bits; the gradients go through two float16 MatMuls.
                    assert np.abs(actual - expected).max() <= 0.02 * scale, (name, tensor.name)
    finally:
        for sess in sessions.values():
            sess.close()


def test_a_feed_the_rewrite_cannot_place_is_refused(graph):
    """The pass lets a white MatMul read the user's own float16 Cast of x instead of adding one: a value fed to that
    Cast would reach the MatMul, which never read it, so the run says so instead of returning a wrong result."""
    x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
    user_half = tf.cast(x, tf.float16, name="user_half")
    tf.identity(user_half, name="kept")
    product = tf.matmul(x, tf.ones([4, 4]), name="mm")
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        sess.run(product, {x: np.ones((2, 4), np.float32)})
        assert not any(cast.startswith("x-0-") for cast in last_report(sess).by_name("mm").casts)
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot feed 'user_half:0'.*made op 'mm' read 'user_half:0' instead"):
            sess.run(product, {x: np.ones((2, 4), np.float32), user_half: np.zeros((2, 4), np.float16)})


def test_a_feed_never_reaches_an_op_that_does_not_read_it(graph):
    """Relu's float16 rounding reuses the user's Cast to float16, which Softmax then reads; the user's Cast back to
    float32 has its readers moved onto that Cast too. A value fed to the Cast back would reach Softmax, which does
    not depend on it, so the feed is refused rather than changing an unrelated fetch."""
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    hidden = tf.nn.relu(tf.matmul(x, tf.ones([3, 3])), name="hidden")
    back = tf.cast(tf.cast(hidden, tf.float16, name="to16"), tf.float32, name="back")
    softmax = tf.nn.softmax(hidden, name="softmax")
    total = tf.matmul(softmax, tf.ones([3, 3])) + back
    feeds = {x: np.full((2, 3), 0.1, np.float32), back: np.array([[9, 0, -9], [1, 2, 3]], np.float32)}
    with tf.compat.v1.Session() as plain:
        want = plain.run(softmax, feeds)
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        np.testing.assert_allclose(sess.run(softmax, {x: feeds[x]}), want, rtol=2e-3)
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot feed 'back:0'.*which op 'softmax' reads too, and 'softmax' does not read"):
            sess.run([softmax, total], feeds)


def test_a_feed_and_a_fetch_that_share_an_inner_tensor_are_refused_together(graph):
    """MaxPool computes in float32 between casts and the pass takes the user's own float16 Cast of it as its
    rounding: both user tensors live in that Cast. Feeding one while fetching the other cannot be honoured (plain
    TensorFlow would compute the fetched one), so the run says so instead of returning the fed value."""
    y = tf.compat.v1.placeholder(tf.float32, [1, 2, 2, 1], name="y")
    pooled = tf.nn.max_pool2d(y, 2, 1, "SAME", name="pool")
    half = tf.cast(pooled, tf.float16, name="half")
    inputs = {y: np.ones([1, 2, 2, 1], np.float32)}
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        np.testing.assert_array_equal(sess.run(half, inputs), np.ones([1, 2, 2, 1], np.float16))
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot feed 'half:0' and fetch 'pool:0'"):
            sess.run(pooled, {**inputs, half: np.full([1, 2, 2, 1], 7.0, np.float16)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot feed both 'half:0' and 'pool:0'"):
            sess.run(y, {**inputs, half: np.full([1, 2, 2, 1], 7, np.float16),
                         pooled: np.full([1, 2, 2, 1], 3.0, np.float32)})


def test_a_feed_is_refused_when_a_reader_added_to_the_running_graph_would_take_it(graph):
    """The readers the feed checks look at include ops added to the graph after the session started: MatMul 'mm',
    added after a run that fed 'user_half', reads it in the emulated graph but not in the user's."""
    x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
    user_half = tf.cast(x, tf.float16, name="user_half")
    kept = tf.identity(user_half, name="kept")
    ones = np.ones((2, 4), np.float32)
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        np.testing.assert_array_equal(sess.run(kept, {x: ones, user_half: np.zeros((2, 4), np.float16)}), 0)
        product = tf.matmul(x, tf.ones([4, 4]), name="mm")
        np.testing.assert_array_equal(sess.run(product, {x: ones}), np.full((2, 4), 4.0))
        assert not any(cast.startswith("x-0-") for cast in last_report(sess).by_name("mm").casts)
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot feed 'user_half:0'.*made op 'mm' read"):
            sess.run(product, {x: ones, user_half: np.zeros((2, 4), np.float16)})



def test_feeds_checked_from_many_threads_at_once_are_each_refused(graph):
    """The readers the feed check reads are built on first use; threads building their first plans at once each
    see all of them (none slips through on a half-built index)."""
    x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
    user_half = tf.cast(x, tf.float16, name="user_half")
    tf.identity(user_half, name="kept")
    filler = x
    for _ in range(300):        # between 'kept' and the MatMuls: building the index spans many thread switches
        filler = tf.abs(filler)
    products = [tf.matmul(x, tf.ones([4, 4]) * float(i), name=f"mm{i}") for i in range(8)]
    ones = np.ones((2, 4), np.float32)
    outcomes = [None] * len(products)
    interval = sys.getswitchinterval()
    start = tf.constant(1.0, name="start")
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        sess.run(start)             # the whole graph imported, no plan with a feed yet
        barrier = threading.Barrier(len(products))
        sys.setswitchinterval(1e-6)

        def feed(i):
            barrier.wait()
            try:
                sess.run(products[i], {x: ones, user_half: np.zeros((2, 4), np.float16)})
                outcomes[i] = "ran"
            except tf.errors.InvalidArgumentError as error:
                outcomes[i] = "refused" if "cannot feed 'user_half:0'" in error.message else error.message

        threads = [threading.Thread(target=feed, args=(i,)) for i in range(len(products))]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(interval)
    assert outcomes == ["refused"] * len(products)
