"""Saturation mode (ascend910 default): a float16 overflow is +-65504 and raises loss scaling's overflow status;
INF/NaN mode (ascend910b default, or set_device_sat_mode(1)) gives inf."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core import contract, soc
from npu_bridge.core.options import options_from_config
from npu_bridge.core.precision import rewrite
from npu_bridge.estimator.npu import npu_plugin
from npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.runtime import last_report

from .conftest import npu_config

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def device_default():
    yield
    soc.set_device_saturation(None)


def _overflowing_product(graph):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    product = tf.matmul(x, tf.fill([2, 2], 300.0), name="mm")      # 2 * 300 * 300 = 180000 > 65504
    return x, product, tf.math.divide(product, 65536.0, name="scaled")


@pytest.mark.parametrize("soc_name, expected", [("ascend910", 65504.0), ("ascend910b", np.inf)])
def test_float16_overflow_saturates_on_the_910_and_is_inf_on_the_910b(graph, soc_name, expected):
    x, product, scaled = _overflowing_product(graph)
    with v1.Session(config=npu_config(soc_config=soc_name)) as sess:
        got, divided = sess.run([product, scaled], {x: np.full((2, 2), 300.0)})
        summary = last_report(sess).summary()
    np.testing.assert_array_equal(got, np.full((2, 2), expected, np.float32))
    mode = "saturation mode" if expected == 65504.0 else "INF/NaN mode"
    assert summary.endswith(mode)
    if expected == 65504.0:
        # 65536 is beyond float16 too: the divisor saturates like the product, and the quotient stays finite
        np.testing.assert_allclose(divided, 1.0, rtol=1e-3)
    else:
        assert np.isnan(divided).all()


def test_set_device_sat_mode_switches_the_whole_device(graph):
    x, product, _ = _overflowing_product(graph)
    npu_plugin.set_device_sat_mode(npu_plugin.INF_NAN_MODE)
    with v1.Session(config=npu_config(soc_config="ascend910")) as sess:
        assert np.isinf(sess.run(product, {x: np.full((2, 2), 300.0)})).all()
        assert last_report(sess).overflow_mode == "inf_nan"
    npu_plugin.set_device_sat_mode(npu_plugin.SATURATION_MODE)
    with v1.Session(config=npu_config(soc_config="ascend910b")) as sess:
        assert (sess.run(product, {x: np.full((2, 2), 300.0)}) == 65504.0).all()


@pytest.mark.parametrize("soc_name", ["ascend910", "ascend910b"])
def test_loss_scaling_skips_the_overflowing_step_in_both_modes(graph, soc_name):
    """A loss scale of 2**20 overflows the float16 gradient of the MatMul: inf on the 910B, 65504 plus the status
    flag on the 910. Either way the step changes no weight and no global step; a small scale applies."""
    x = v1.placeholder(tf.float32, [4, 4], name="x")
    w = v1.Variable(np.full((4, 4), 0.5, np.float32), name="w")
    loss = tf.reduce_mean(tf.matmul(x, w))
    scale = v1.placeholder_with_default(tf.constant(2.0 ** 20), [], name="scale")
    manager = FixedLossScaleManager(1.0)
    manager.get_loss_scale = lambda: scale
    step = v1.train.get_or_create_global_step()
    train = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), manager).minimize(loss, global_step=step)
    with v1.Session(config=npu_config(soc_config=soc_name)) as sess:
        sess.run(v1.global_variables_initializer())
        feed = {x: np.full((4, 4), 1000.0, np.float32)}
        sess.run(train, feed)
        assert sess.run(step) == 0
        np.testing.assert_array_equal(sess.run(w), np.full((4, 4), 0.5, np.float32))
        sess.run(train, {**feed, scale: 1.0})
        assert sess.run(step) == 1


def test_the_overflow_status_reads_false_outside_the_emulation(graph):
    x = v1.placeholder(tf.float32, [4, 4], name="x")
    w = v1.Variable(np.full((4, 4), 0.5, np.float32), name="w")
    step = v1.train.get_or_create_global_step()
    train = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), FixedLossScaleManager(2.0 ** 20)) \
        .minimize(tf.reduce_mean(tf.matmul(x, w)), global_step=step)
    with v1.Session() as sess:          # plain float32 TensorFlow: nothing overflows, the step applies
        sess.run(v1.global_variables_initializer())
        sess.run(train, {x: np.full((4, 4), 1000.0, np.float32)})
        assert sess.run(step) == 1


def _style_loss(image, target_gram):
    """A style-transfer loss: the Gram matrix of conv features divided by a large constant (as the scripts do)."""
    kernel = v1.get_variable("kernel", initializer=tf.constant(
        np.random.default_rng(0).normal(0, 0.5, (3, 3, 3, 16)).astype(np.float32)), trainable=False)
    features = tf.nn.relu(tf.nn.conv2d(image, kernel, [1, 1, 1, 1], "SAME"))
    flat = tf.reshape(features, [-1, 16])
    gram = tf.matmul(flat, flat, transpose_a=True) / 65536.0
    return tf.reduce_sum(tf.square(gram - target_gram))


def test_style_transfer_gram_loss_trains_on_the_910(graph):
    """The Gram matrix overflows float16; saturated, divided by a saturated 65536, it stays near 1 and trains (with
    inf it was NaN after a few steps in the ported script)."""
    rng = np.random.default_rng(1)
    image = v1.Variable(rng.uniform(0, 8, (1, 32, 32, 3)).astype(np.float32), name="image")
    loss = _style_loss(image, tf.constant(rng.uniform(0, 1, (16, 16)).astype(np.float32)))
    train = v1.train.AdamOptimizer(0.1).minimize(loss)
    with v1.Session(config=npu_config(soc_config="ascend910")) as sess:
        sess.run(v1.global_variables_initializer())
        losses = [sess.run([train, loss])[1] for _ in range(10)]
        pixels = sess.run(image)
    assert np.isfinite(losses).all() and np.isfinite(pixels).all()
    assert losses[-1] < losses[0]


def test_the_constant_warning_says_what_the_selected_device_does(graph):
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    mask = tf.constant(-1e9, name="mask_value")
    tf.add(tf.matmul(x, x), mask, name="masked")
    for soc_name, says in (("ascend910", "-1e+09 is -65504 in float16 (saturation mode)"),
                           ("ascend910b", "-1e+09 is -inf in float16")):
        options = options_from_config(npu_config(soc_config=soc_name))
        result = rewrite(graph.as_graph_def(), options, log=False)
        assert any(f"constant 'mask_value' ({says})" in warning for warning in result.report.warnings)


def test_rewriting_a_saturated_graph_again_changes_nothing(graph):
    _overflowing_product(graph)
    options = options_from_config(npu_config(soc_config="ascend910"))
    first = rewrite(graph.as_graph_def(), options, log=False)
    again = rewrite(first.graph_def, options, log=False)
    assert first.report.n_clamped > 0 and again.report.n_clamped == 0
    assert again.graph_def.SerializeToString(deterministic=True) == \
        first.graph_def.SerializeToString(deterministic=True)


def _conv_relu_pool_training(graph, scale):
    """Conv + ReLU + MaxPool + dense under loss scaling: the ops computed in float32 between Casts that cannot
    leave the float16 range (Relu, ReluGrad, MaxPool) next to ones that overflow when `scale` is large."""
    rng = np.random.default_rng(11)
    x = v1.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    labels = v1.placeholder(tf.int32, [2], name="labels")
    kernel = v1.Variable(rng.standard_normal((3, 3, 3, 4)).astype(np.float32), name="kernel")
    h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, kernel, 1, "SAME")), 2, 2, "SAME", name="pool")
    logits = tf.matmul(tf.reshape(h, [2, -1]), v1.Variable(rng.standard_normal((36, 5)).astype(np.float32)))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(1e-4), FixedLossScaleManager(8.0)) \
        .minimize(loss, global_step=v1.train.get_or_create_global_step())
    feeds = {x: scale * rng.standard_normal((2, 6, 6, 3)).astype(np.float32), labels: np.array([1, 3], np.int32)}
    return train, [h, logits, loss, kernel], feeds


@pytest.mark.parametrize("scale", [1.0, 5000.0])
def test_ops_that_cannot_overflow_have_no_clamp_and_the_values_stay_the_same(graph, monkeypatch, scale):
    """A Relu, ReluGrad or MaxPool computed in float32 between Casts reads float16 values already clamped, so the
    clamp before its Cast to float16 was a pass over the tensor that changed nothing: without it, every value
    and every skipped step is bit-identical to the graph that had it (scale 5000 overflows: steps are skipped)."""
    from npu_bridge.core.precision import saturation

    train, fetched, feeds = _conv_relu_pool_training(graph, scale)
    init = v1.global_variables_initializer()

    def run_three_steps():
        with v1.Session(config=npu_config(soc_config="ascend910")) as sess:
            sess.run(init)
            values = [sess.run([train, *fetched], feeds)[1:] for _ in range(3)]
            values.append(sess.run(v1.train.get_global_step()))
            return values, sess._npu_emulation.program.result.graph_def

    values, graph_def = run_three_steps()
    clamped = {contract.clamped_source(n.name) for n in graph_def.node
               if n.name.endswith(contract.SATURATION_SUFFIX)}
    assert not {"Relu", "pool", "gradients/Relu_grad/ReluGrad"} & clamped
    assert "Conv2D" in clamped
    monkeypatch.setattr(saturation, "_cannot_overflow", lambda graph, tensor: False)
    before, before_def = run_three_steps()
    assert {"Relu", "pool"} <= {contract.clamped_source(n.name) for n in before_def.node
                                if n.name.endswith(contract.SATURATION_SUFFIX)}
    for step, (now, then) in enumerate(zip(values[:-1], before[:-1])):
        for a, b in zip(now, then):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}")
    assert values[-1] == before[-1]
    assert values[-1] == (0 if scale > 1 else 3), "every step overflows at scale 5000 and none at 1"


def test_the_float16_clamp_gives_clip_by_value_bits_for_every_float16_value(graph):
    """A float16 clamp is Minimum then Maximum, not ClipByValue (whose CPU kernel converts element by element):
    every one of the 65,536 float16 bit patterns (NaNs, infinities, -0, subnormals), in an array whose length
    also exercises the kernels' vector tails, comes out with ClipByValue's exact bits."""
    patterns = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    values = np.concatenate([patterns, patterns[:7]]).view(np.float16)
    x = v1.placeholder(tf.float16, [values.size])
    low, high = tf.constant(-65504.0, tf.float16), tf.constant(65504.0, tf.float16)
    clip = tf.raw_ops.ClipByValue(t=x, clip_value_min=low, clip_value_max=high)
    pair = tf.maximum(tf.minimum(x, high), low)
    with v1.Session() as sess:
        expected, got = sess.run([clip, pair], {x: values})
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))

    product = tf.matmul(tf.cast(x[:4], tf.float32)[None, :], tf.ones([4, 2]), name="product")
    tf.nn.relu(product + 1.0, name="shifted")
    options = options_from_config(npu_config(soc_config="ascend910"))
    nodes = {n.name: n for n in rewrite(graph.as_graph_def(), options, log=False).graph_def.node}
    half_clamps = [n for n in nodes.values()
                   if n.name.endswith(contract.SATURATION_SUFFIX) and n.attr["T"].type == 19]
    assert half_clamps and all(n.op == "Maximum" and nodes[n.input[0]].op == "Minimum" for n in half_clamps)


def test_the_overflow_mode_is_fixed_per_session_and_reported(graph):
    """set_device_sat_mode after a session's first run changes new sessions only: the running session's added
    ops clamp as its graph does (saturation on ascend910), and its report keeps saying so."""
    x, product, _ = _overflowing_product(graph)
    feed = {x: np.full((2, 2), 300.0)}
    with v1.Session(config=npu_config(soc_config="ascend910")) as sess:
        assert (sess.run(product, feed) == 65504.0).all()
        npu_plugin.set_device_sat_mode(npu_plugin.INF_NAN_MODE)
        assert (sess.run(product * 1.0, feed) == 65504.0).all()
        assert last_report(sess).overflow_mode == "saturation"
    with v1.Session(config=npu_config(soc_config="ascend910")) as later:
        assert np.isinf(later.run(product, feed)).all()
        assert last_report(later).overflow_mode == "inf_nan"
