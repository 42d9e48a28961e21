"""Run-time errors in user terms, concurrent runs, independent sessions, iterations_per_loop."""
import threading

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.runtime.user_errors import user_name

from npu_test_support import fp16

from .conftest import npu_config


def test_missing_feed_error_names_the_user_placeholder(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="features")
    y = tf.matmul(x, tf.constant([[1.0], [2.0]]), name="y")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="features") as caught:
            sess.run(y)
    assert caught.value.op is not None and caught.value.op.graph is graph


def test_error_in_an_op_behind_a_cast_names_the_user_op_not_the_cast(graph):
    x = tf.compat.v1.placeholder(tf.float32, [1, 2], name="x")
    y = tf.matmul(x, tf.constant([[1.0], [1.0]]), name="y")
    checked = tf.debugging.check_numerics(y, "y is not finite", name="check_y")
    with tf.compat.v1.Session(config=npu_config()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as caught:
            sess.run(checked, {x: [[np.nan, 1.0]]})
    assert "NpuBridge" not in caught.value.message
    assert "check_y" in caught.value.message
    assert caught.value.op is graph.get_operation_by_name("check_y")


def test_internal_node_names_map_back_to_their_user_op():
    message = ("[[{{node block/conv-0-CastToFp16-NpuBridge-0-CastToFp32-NpuBridge}}]] "
               "'logits-0-CastToFp16-NpuBridge-0-CastTofloat32-NpuBridgeFetch' and y-10-CastToBf16-NpuBridge:0")
    assert user_name(message) == "[[{{node block/conv}}]] 'logits' and y:0"


def test_concurrent_runs_on_one_session(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    y = tf.matmul(x, tf.constant(np.full((3, 2), 1 / 3, np.float32)), name="y")
    counter = tf.compat.v1.get_variable("counter", initializer=0, use_resource=True)
    bump = counter.assign_add(1).op
    failures = []
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(counter.initializer)

        def worker(seed):
            rng = np.random.default_rng(seed)
            for _ in range(25):
                data = rng.random((4, 3), dtype=np.float32)
                value, _ = sess.run([y, bump], {x: data})
                if not np.array_equal(value, fp16(fp16(data) @ fp16(np.full((3, 2), 1 / 3)))):
                    failures.append(seed)

        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sess.run(counter.read_value()) == 100
    assert not failures


def test_sessions_with_different_options_do_not_interfere(graph):
    x = tf.compat.v1.placeholder(tf.float32, [1, 2], name="x")
    y = tf.matmul(x, tf.constant([[1 / 3], [1 / 3]]), name="y")
    data = np.full((1, 2), 1 / 3, np.float32)
    mixed = tf.compat.v1.Session(config=npu_config("mixed_float16"))
    origin = tf.compat.v1.Session(config=npu_config("origin"))
    plain = tf.compat.v1.Session()
    for _ in range(2):
        reduced, kept, host = mixed.run(y, {x: data}), origin.run(y, {x: data}), plain.run(y, {x: data})
        np.testing.assert_array_equal(reduced, fp16(fp16(data) @ fp16([[1 / 3], [1 / 3]])))
        np.testing.assert_array_equal(kept, host)
    for sess in (mixed, origin, plain):
        sess.close()


def _loop_op(graph, counter, iterations):
    attrs = {"_npu_iterations_per_loop": attr_value_pb2.AttrValue(i=iterations)}
    with graph._attr_scope(attrs):
        return tf.group(counter.assign_add(1.0), name="IterationOp")


def test_iterations_per_loop_runs_the_step_that_many_times(graph):
    counter = tf.compat.v1.get_variable("counter", initializer=0.0, use_resource=True)
    loop = _loop_op(graph, counter, 5)
    with tf.compat.v1.Session(config=npu_config(iterations_per_loop=5)) as sess:
        sess.run(counter.initializer)
        assert sess.run([loop, counter.read_value()])[0] is None
        sess.run(loop)
        assert sess.run(counter.read_value()) == 10.0


def test_set_iteration_per_loop_from_util_drives_the_loop(graph):
    from npu_bridge.estimator.npu import util

    counter = tf.compat.v1.get_variable("counter", initializer=0.0, use_resource=True)
    step = counter.assign_add(1.0).op
    with tf.compat.v1.Session(config=npu_config(iterations_per_loop=3)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(tf.compat.v1.local_variables_initializer())
        loop = util.set_iteration_per_loop(sess, step, 3)
        sess.run(loop)
        assert sess.run(counter.read_value()) == 3.0


def test_iterations_per_loop_must_match_the_session_config(graph):
    counter = tf.compat.v1.get_variable("counter", initializer=0.0, use_resource=True)
    loop = _loop_op(graph, counter, 4)
    with tf.compat.v1.Session(config=npu_config(iterations_per_loop=2)) as sess:
        sess.run(counter.initializer)
        with pytest.raises(NpuConfigError, match=r"iterations_per_loop=4.*is 2"):
            sess.run(loop)
