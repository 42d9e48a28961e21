"""The float status ops read the overflow register loss scaling reads: a float16 overflow in saturation mode (the
Ascend910 default) raises the status, and a script's own loss scaling skips that step."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from npu_bridge.core import soc
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import gen_npu_ops
from npu_test_support import npu_config

HUGE_SCALE = 2.0 ** 20       # the float16 gradient of the MatMul overflows under this loss scale


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph
    soc.set_device_saturation(None)


def _config():
    return npu_config(soc_config="ascend910", precision_mode_v2="mixed_float16", use_off_line=True)


def _manual_loss_scaling(read_status):
    """A script's own loss scaling, as the adapter's NPULossScaleOptimizer builds it; read_status(grads) -> bool."""
    x = tf.placeholder(tf.float32, [4, 4], name="x")
    w = tf.Variable(np.full((4, 4), 0.5, np.float32), name="w")
    scale = tf.placeholder_with_default(tf.constant(HUGE_SCALE), [], name="scale")
    loss = tf.reduce_mean(tf.matmul(x, w))
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_and_vars = [(g / scale, v) for g, v in opt.compute_gradients(loss * scale, [w])]
    finite = read_status([g for g, _ in grads_and_vars])
    step = tf.train.get_or_create_global_step()
    train = tf.cond(finite, lambda: opt.apply_gradients(grads_and_vars, global_step=step), tf.no_op)
    return x, w, scale, step, train


def _v1_status(grads, fetched):
    status = npu_ops.npu_alloc_float_status()
    with tf.control_dependencies(grads):
        local = gen_npu_ops.npu_get_float_status(status)
    cleared = gen_npu_ops.npu_clear_float_status(local)
    fetched.update(local=local, cleared=cleared)
    with tf.control_dependencies([cleared]):
        return tf.reduce_all(tf.equal(0.0, local))


def _in_place_status(grads, fetched):
    """The older form: the buffer itself is compared with the cleared status (AvatarGAN's port)."""
    status = gen_npu_ops.npu_alloc_float_status()
    with tf.control_dependencies(grads):
        local = gen_npu_ops.npu_get_float_status(status)
        cleared = gen_npu_ops.npu_clear_float_status(local)
    fetched.update(local=local, cleared=cleared)
    return tf.reduce_all(tf.equal(status, cleared))


def _v2_status(grads, fetched):
    with tf.control_dependencies(grads):
        local = gen_npu_ops.npu_get_float_status_v2()
    with tf.control_dependencies([local]):
        cleared = gen_npu_ops.npu_clear_float_status_v2()
    fetched.update(local=local)
    with tf.control_dependencies([cleared]):
        return tf.reduce_all(tf.equal(0, local))


@pytest.mark.parametrize("reader", [_v1_status, _in_place_status, _v2_status], ids=["v1", "in_place", "v2"])
def test_an_overflow_raises_the_status_and_the_step_is_skipped(reader):
    fetched = {}
    x, w, scale, step, train = _manual_loss_scaling(lambda grads: reader(grads, fetched))
    feed = {x: np.full((4, 4), 1000.0, np.float32)}
    with tf.Session(config=_config()) as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(fetched["local"], feed).max() == 1
        sess.run(train, feed)
        assert sess.run(step) == 0
        np.testing.assert_array_equal(sess.run(w), np.full((4, 4), 0.5, np.float32))
        assert sess.run(fetched["local"], {**feed, scale: 1.0}).max() == 0
        sess.run(train, {**feed, scale: 1.0})
        assert sess.run(step) == 1
        assert (sess.run(w) < 0.5).all()
        if "cleared" in fetched:
            np.testing.assert_array_equal(sess.run(fetched["cleared"], feed), [0.0])


def test_the_status_reads_zero_without_the_emulation():
    fetched = {}
    x, w, scale, step, train = _manual_loss_scaling(lambda grads: _v1_status(grads, fetched))
    with tf.Session() as sess:       # plain float32 TensorFlow: nothing overflows
        sess.run(tf.global_variables_initializer())
        feed = {x: np.full((4, 4), 1000.0, np.float32)}
        np.testing.assert_array_equal(sess.run(fetched["local"], feed), [0.0])
        sess.run(train, feed)
        assert sess.run(step) == 1
