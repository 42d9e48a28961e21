"""Every way TF1 code hands fetches and feeds to a session works on the emulated NPU, with the user's dtypes."""
import collections

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2
from tensorflow.python.ops import session_ops

from npu_bridge.runtime import last_report

from npu_test_support import fp16

from .conftest import npu_config

X = np.full((2, 4), 1 / 3, np.float32)
W = np.full((4, 3), 1 / 3, np.float32)
Y16 = fp16(fp16(X) @ fp16(W))
Pair = collections.namedtuple("Pair", "matmul total")


@pytest.fixture
def model(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    y = tf.matmul(x, tf.constant(W), name="y")
    total = tf.reduce_sum(y, name="total")
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        yield sess, x, y, total


def test_nested_fetch_structures_come_back_in_shape(model):
    sess, x, y, total = model
    out = sess.run({"pair": Pair(y, total), "list": [y, (total,)], "op": y.op}, {x: X})
    assert isinstance(out["pair"], Pair)
    np.testing.assert_array_equal(out["pair"].matmul, Y16)
    np.testing.assert_array_equal(out["list"][0], Y16)
    assert isinstance(out["list"][1], tuple) and out["list"][1][0] == out["pair"].total
    assert out["op"] is None


def test_a_tensor_fed_under_two_keys_takes_the_later_value(model):
    sess, x, y, _ = model
    got = sess.run([y, x], {x: np.zeros_like(X), "x:0": X})
    np.testing.assert_array_equal(got[0], Y16)
    np.testing.assert_array_equal(got[1], X)


def test_names_as_strings_for_fetches_and_feeds(model):
    sess, *_ = model
    np.testing.assert_array_equal(sess.run("y:0", {"x:0": X}), Y16)
    assert sess.run("y", {"x:0": X}) is None


def test_feeds_are_converted_to_the_declared_dtype(model):
    sess, x, y, _ = model
    np.testing.assert_array_equal(sess.run(y, {x: X.astype(np.float64)}), Y16)
    np.testing.assert_array_equal(sess.run(y, {x: X.tolist()}), Y16)


def test_feed_shape_mismatch_is_tensorflows_error(model):
    sess, x, y, _ = model
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(4,\) for Tensor x:0, which has shape"):
        sess.run(y, {x: np.ones(4)})


def test_feeding_a_tensor_value_is_refused(model):
    sess, x, y, _ = model
    with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
        sess.run(y, {x: tf.constant(X)})


def test_feeding_an_intermediate_float16_tensor(model):
    sess, x, y, total = model
    fed = np.full((2, 3), 0.1, np.float32)
    value = sess.run(total, {y: fed})
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, fp16(fed).sum(), rtol=1e-3)
    np.testing.assert_array_equal(sess.run(y, {y: fed}), fed)


def test_fetching_the_same_tensor_twice_and_a_cached_plan_stays_correct(model):
    sess, x, y, _ = model
    for scale in (1.0, 2.0, 3.0):
        a, b = sess.run([y, y], {x: X * scale})
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, fp16(fp16(X * scale) @ fp16(W)))


def test_make_callable_with_and_without_feeds(model):
    sess, x, y, total = model
    run_y = sess.make_callable(y, feed_list=[x])
    np.testing.assert_array_equal(run_y(X), Y16)
    run_both = sess.make_callable([y, total], feed_list=[x], accept_options=True)
    metadata = tf.compat.v1.RunMetadata()
    options = tf.compat.v1.RunOptions(output_partition_graphs=True)
    values = run_both(X, options=options, run_metadata=metadata)
    np.testing.assert_array_equal(values[0], Y16)
    assert metadata.partition_graphs
    constant = sess.make_callable(tf.constant(2.5))
    assert constant() == np.float32(2.5)


def test_run_metadata_shows_the_float16_matmul_that_executed(model):
    sess, x, y, _ = model
    metadata = tf.compat.v1.RunMetadata()
    sess.run(y, {x: X}, options=tf.compat.v1.RunOptions(output_partition_graphs=True), run_metadata=metadata)
    executed = {n.name: n for g in metadata.partition_graphs for n in g.node}
    record = last_report(sess).by_name("y")
    assert record.decision == "float16"
    # A cube op computes in float32 and emits float16 (emulated between casts), else it is retyped in place.
    if record.emulated:
        assert executed["y-0-CastToFp16-NpuBridge"].attr["DstT"].type == tf.float16.as_datatype_enum
    else:
        assert executed["y"].attr["T"].type == tf.float16.as_datatype_enum


def test_eval_and_run_under_the_default_session(model):
    sess, x, y, _ = model
    counter = tf.compat.v1.get_variable("counter", initializer=0.0, use_resource=False)
    bump = tf.compat.v1.assign_add(counter, 1.5).op
    with sess.as_default():
        counter.initializer.run()
        bump.run()
        np.testing.assert_array_equal(y.eval({x: X}), Y16)
        assert counter.eval() == 1.5


def test_sparse_tensors_fetch_and_feed(model):
    sess, *_ = model
    sparse_in = tf.compat.v1.sparse_placeholder(tf.float32, name="sparse_in")
    doubled = sparse_in * 2.0
    value = tf.compat.v1.SparseTensorValue([[0, 1], [1, 0]], np.array([1.5, 2.5], np.float32), [2, 2])
    out = sess.run(doubled, {sparse_in: value})
    assert isinstance(out, tf.compat.v1.SparseTensorValue)
    np.testing.assert_array_equal(out.values, [3.0, 5.0])
    np.testing.assert_array_equal(out.indices, [[0, 1], [1, 0]])


def test_bfloat16_feed_and_fetch_under_mixed_bfloat16(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    y = tf.matmul(x, tf.constant(W), name="y")
    config = npu_config("mixed_bfloat16", soc_config="Ascend910B1")
    with tf.compat.v1.Session(config=config) as sess:
        value = sess.run(y, {x: X})
        fed = sess.run(y, {y: np.full((2, 3), 1 / 3, np.float32)})
    bf16 = lambda a: np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)  # noqa: E731
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, bf16(bf16(X) @ bf16(W)), rtol=1e-2)
    assert value[0, 0] == bf16(value[0, 0])
    np.testing.assert_array_equal(fed, np.full((2, 3), 1 / 3, np.float32))


def test_partial_run(model):
    sess, x, y, total = model
    handle = sess.partial_run_setup([y, total], [x])
    np.testing.assert_array_equal(sess.partial_run(handle, y, {x: X}), Y16)
    assert sess.partial_run(handle, total) == pytest.approx(Y16.sum(), rel=1e-3)
    again = sess.partial_run_setup([y], [x])
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        sess.partial_run(again, total, {x: X})
    assert caught.value.message.count("Graph execution error") <= 1
    assert "was not specified in partial_run_setup" in caught.value.message


def test_callable_from_options_as_tf_keras_builds_it(model):
    # tf.keras graph functions hand the session CallableOptions of user tensor names, with a tensor connection
    # feeding one placeholder from another tensor, and call the private factory directly.
    sess, x, y, total = model
    scale = tf.compat.v1.placeholder(tf.float32, [], name="scale")
    scaled = tf.multiply(total, scale, name="scaled")
    counter = tf.compat.v1.get_variable("calls", initializer=0, use_resource=True)
    bump = counter.assign_add(1).op
    sess.run(counter.initializer)
    options = config_pb2.CallableOptions(feed=[x.name], fetch=[y.name, scaled.name, y.name], target=[bump.name])
    options.tensor_connection.add(from_tensor=tf.constant(2.0).name, to_tensor=scale.name)
    run_step = sess._make_callable_from_options(options)
    metadata = tf.compat.v1.RunMetadata()
    values = run_step(X, run_metadata=metadata)
    assert len(values) == 3
    np.testing.assert_array_equal(values[0], Y16)
    np.testing.assert_array_equal(values[2], Y16)
    assert values[1] == pytest.approx(2 * Y16.sum(), rel=1e-3)
    assert sess.run(counter.read_value()) == 1


def test_session_handles_keep_tensors_in_the_emulated_session(model):
    sess, x, y, _ = model
    handle = sess.run(tf.compat.v1.get_session_handle(y), {x: X})
    assert isinstance(handle, session_ops.TensorHandle)
    np.testing.assert_array_equal(handle.eval(), Y16)
    holder, stored = tf.compat.v1.get_session_tensor(handle.handle, tf.float32)
    np.testing.assert_array_equal(sess.run(stored * 2.0, {holder: handle.handle}), 2 * Y16)
    # A handle is also a feed value for any tensor of its dtype (TensorFlow resolves it from the session's state).
    np.testing.assert_array_equal(sess.run(y, {x: sess.run(tf.compat.v1.get_session_handle(x + 0.0), {x: X})}), Y16)


@pytest.mark.parametrize("mode", ["mixed_float16", "origin"])
def test_a_fetched_variable_value_is_the_users_own_copy(graph, mode):
    """The inner C++ callable returns a variable's buffer itself; Session.run copies it, and so must the emulation,
    or an array fetched before an update changes with the variable."""
    w = tf.compat.v1.get_variable("w", initializer=np.zeros([2], np.float32), use_resource=False)
    increment = tf.compat.v1.assign_add(w, [1.0, 1.0])
    with tf.compat.v1.Session(config=npu_config(mode)) as sess:
        sess.run(w.initializer)
        before, read = sess.run([w, w.value()])
        sess.run(increment)
        sess.run(increment)
        after = sess.run(w)
    np.testing.assert_array_equal(before, [0.0, 0.0])
    np.testing.assert_array_equal(read, [0.0, 0.0])
    np.testing.assert_array_equal(after, [2.0, 2.0])
