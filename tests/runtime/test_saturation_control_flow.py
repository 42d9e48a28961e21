"""Saturation mode: a float16 clamp inside a v1 while-loop body or cond branch raises loss scaling's overflow
status, so the overflowing step is skipped (weights and global step unchanged, loss scale lowered)."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core import soc
from npu_bridge.core.options import options_from_config
from npu_bridge.core.precision import frames, rewrite
from npu_bridge.estimator.npu.npu_loss_scale_manager import ExponentialUpdateLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.runtime import last_report

from .conftest import npu_config

v1 = tf.compat.v1
OVERFLOWING, SMALL = 1000.0, 1e-3         # a loss scale of 2**10 overflows float16 gradients for the first only


@pytest.fixture(autouse=True)
def device_default():
    yield
    soc.set_device_saturation(None)


def _loop(x, w):
    return tf.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, tf.matmul(h, w)), [0, x])[1]


def _nested_loop(x, w):
    def outer(i, h):
        inner = tf.while_loop(lambda j, g: j < 2, lambda j, g: (j + 1, tf.matmul(g, w)), [0, h])[1]
        return i + 1, inner
    return tf.while_loop(lambda i, h: i < 1, outer, [0, x])[1]


def _cond(x, w, take_true):
    return tf.cond(take_true, lambda: tf.matmul(x, w), lambda: tf.matmul(x, w * 2.0))


def _train(build, precision="mixed_float16"):
    """One graph, a session on the 910 (saturation mode); runs steps with a given input and cond predicate."""
    x = v1.placeholder(tf.float32, [4, 4], name="x")
    take_true = v1.placeholder_with_default(True, [], name="take_true")
    w = v1.Variable(np.full((4, 4), 0.5, np.float32), name="w")
    loss = tf.reduce_mean(build(x, w, take_true))
    manager = ExponentialUpdateLossScaleManager(2.0 ** 10, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    step = v1.train.get_or_create_global_step()
    train = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), manager).minimize(loss, global_step=step)
    modes = {"precision_mode_v2": "mixed_float16"} if precision == "mixed_float16" else \
        {"precision_mode_v2": None, "precision_mode": precision}
    sess = v1.Session(config=npu_config(soc_config="ascend910", **modes))
    sess.run(v1.global_variables_initializer())

    def run(value, predicate=True):
        sess.run(train, {x: np.full((4, 4), value, np.float32), take_true: predicate})
        return sess.run([step, w, manager.get_loss_scale()])
    return sess, run


def _assert_skipped_then_applied(run, predicate=True):
    step, weights, scale = run(OVERFLOWING, predicate)
    assert step == 0 and scale == 2.0 ** 9
    np.testing.assert_array_equal(weights, np.full((4, 4), 0.5, np.float32))
    step, weights, scale = run(SMALL, predicate)
    assert step == 1 and scale == 2.0 ** 9
    assert (weights < 0.5).all()


@pytest.mark.parametrize("precision", ["mixed_float16", "force_fp16"])
@pytest.mark.parametrize("build", [_loop, _nested_loop], ids=["while_loop", "nested_while_loop"])
def test_an_overflow_in_a_loop_body_skips_the_step(graph, build, precision):
    sess, run = _train(lambda x, w, _: build(x, w), precision)
    with sess:
        _assert_skipped_then_applied(run)
        report = last_report(sess)
    assert report.overflow_mode == "saturation" and report.mode_name.startswith(precision)


@pytest.mark.parametrize("taken", [True, False])
def test_an_overflow_in_either_cond_branch_skips_the_step(graph, taken):
    sess, run = _train(_cond)
    with sess:
        _assert_skipped_then_applied(run, taken)


def test_an_overflow_in_a_branch_not_taken_does_not_skip_the_step(graph):
    """The true branch overflows only for a large input; with it not taken, the false branch stays in range."""
    def build(x, w, take_true):
        return tf.cond(take_true, lambda: tf.matmul(x, w), lambda: tf.matmul(x * 1e-6, w))
    sess, run = _train(build)
    with sess:
        step, _, scale = run(OVERFLOWING, False)
        assert step == 1 and scale == 2.0 ** 10


def test_graphs_without_clamps_in_control_flow_are_rewritten_as_before(graph, monkeypatch):
    """A loop of float32 counters next to a float16 MatMul: the loop holds no clamp, so no flag is carried out of
    a frame (the graph and report are byte for byte those of a pass that cannot do it), no control-flow op is
    added, and the MatMul's overflow still skips the step."""
    def build(x, w, _):
        count = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + 1.0), [0, 0.0])[1]
        return tf.matmul(x, w) * tf.stop_gradient(count)

    sess, run = _train(build)
    options = options_from_config(npu_config(soc_config="ascend910"))
    first = rewrite(graph.as_graph_def(), options, log=False)
    with monkeypatch.context() as patch:
        patch.setattr(frames.FlagLifter, "to_root", lambda self, flags: pytest.fail(f"lifted {flags}"))
        unlifted = rewrite(graph.as_graph_def(), options, log=False)
    assert first.graph_def.SerializeToString(deterministic=True) == \
        unlifted.graph_def.SerializeToString(deterministic=True)
    assert first.report.to_json() == unlifted.report.to_json() and first.report.n_clamped > 0
    for op in ("Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"):
        assert _count(first.graph_def, op) == _count(graph.as_graph_def(), op)
    with sess:
        step, _, scale = run(OVERFLOWING)
    assert step == 0 and scale == 2.0 ** 9


def _count(graph_def, op):
    return sum(node.op == op for node in graph_def.node)
