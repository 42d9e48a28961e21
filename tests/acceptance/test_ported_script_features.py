"""npu_bridge features of ported scripts whose effect only shows in an emulated session: float16 gradient
overflow caught by loss scaling, per-op dtype pins, and iterations_per_loop consuming the input pipeline."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.npu_init import ExponentialUpdateLossScaleManager, NPULossScaleOptimizer, npu_scope, util
from npu_bridge.runtime import last_report

from .conftest import fp16_matmul, ported_config

A = np.full((2, 3), 1 / 3, np.float32)
B = np.array([[0.1, 1 / 3], [0.7, 1 / 7], [2 / 3, 0.9]], np.float32)


@pytest.mark.parametrize("soc", [None, "Ascend910B1"], ids=["ascend910-saturation", "ascend910b-inf-nan"])
def test_gradient_that_overflows_only_in_float16_is_skipped_and_lowers_the_scale(graph, soc):
    # d(loss)/dw = 4 rows * 3.0 * (2**15 / 4) = 98304 per weight: finite in float32, beyond float16's 65504.
    x = tf.constant(np.full((4, 8), 3.0, np.float32))
    w = tf.compat.v1.get_variable("w", [8, 1], initializer=tf.compat.v1.constant_initializer(0.5))
    loss = tf.reduce_mean(tf.matmul(x, w, name="predict"))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    manager = ExponentialUpdateLossScaleManager(2 ** 15, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    train = NPULossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.01), manager).minimize(
        loss, global_step=global_step)
    init = tf.compat.v1.global_variables_initializer()
    config = ported_config(**({"soc_config": soc} if soc else {}))
    with tf.compat.v1.Session(config=config) as sess:
        sess.run(init)
        sess.run(train)
        np.testing.assert_array_equal(sess.run(w), np.full((8, 1), 0.5, np.float32))
        assert sess.run(global_step) == 0
        assert sess.run("loss_scale:0") == 2 ** 14
        sess.run(train)
        assert sess.run(global_step) == 1, "at 2**14 the float16 gradient (49152) fits: the step is applied"
    with tf.compat.v1.Session() as plain:
        plain.run(init)
        plain.run(train)
        assert plain.run(global_step) == 1 and plain.run("loss_scale:0") == 2 ** 15


def test_keep_dtype_scope_and_keep_tensors_dtypes_keep_float32_values(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    with npu_scope.keep_dtype_scope():
        scoped = tf.matmul(x, tf.constant(B), name="scoped")
    pinned = tf.matmul(x, tf.constant(B), name="pinned")
    util.keep_tensors_dtypes(graph, [pinned])
    reduced = tf.matmul(x, tf.constant(B), name="reduced")
    with tf.compat.v1.Session(config=ported_config()) as sess:
        values = sess.run([scoped, pinned, reduced], {x: A})
        report = last_report(sess)
    with tf.compat.v1.Session() as plain:
        exact = plain.run(scoped, {x: A})
    np.testing.assert_array_equal(values[0], exact)
    np.testing.assert_array_equal(values[1], exact)
    np.testing.assert_array_equal(values[2], fp16_matmul(A, B))
    assert [report.by_name(n).decision for n in ("scoped", "pinned", "reduced")] == ["float32", "float32", "float16"]


def test_iteration_op_consumes_one_element_per_iteration_of_the_input_pipeline(graph):
    item = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(100)).get_next()
    total = tf.compat.v1.get_variable("total", initializer=tf.constant(0, tf.int64), use_resource=True)
    step = total.assign_add(item).op
    with tf.compat.v1.Session(config=ported_config(iterations_per_loop=4)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        loop = util.set_iteration_per_loop(sess, step, 4)
        sess.run(loop)
        assert sess.run(total.read_value()) == 0 + 1 + 2 + 3
        sess.run(loop)
        assert sess.run(total.read_value()) == sum(range(8))
        assert sess.run(item) == 8
