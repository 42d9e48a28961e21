"""Loss scaling: scaled loss, unscaled gradients, skipped overflowing steps, scale growth and decay."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from npu_bridge.core import soc
from npu_bridge.core.errors import NpuConfigWarning
from npu_bridge.estimator.npu import npu_plugin
from npu_bridge.estimator.npu.npu_loss_scale_manager import (
    ExponentialUpdateLossScaleManager,
    FixedLossScaleManager,
)
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def _model(manager, optimizer=None):
    """A one-weight model whose gradient is the fed value `g` (loss = w * g)."""
    w = tf.Variable(1.0, name="w")
    g = tf.placeholder(tf.float32, [], name="g")
    global_step = tf.train.get_or_create_global_step()
    opt = NPULossScaleOptimizer(optimizer or tf.train.GradientDescentOptimizer(1.0), manager)
    train_op = opt.minimize(w * g, global_step=global_step)
    return w, g, global_step, opt, train_op


def test_fixed_manager_rejects_scale_below_one():
    with pytest.raises(ValueError, match="loss scale must be at least 1."):
        FixedLossScaleManager(0.5)


def test_gradients_are_unscaled_and_loss_is_scaled():
    w = tf.Variable(3.0)
    opt = NPULossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), FixedLossScaleManager(1024))
    (grad, _), = opt.compute_gradients(w * w, var_list=[w])
    scaled_grad = tf.gradients(w * w * 1024.0, w)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(grad) == pytest.approx(6.0)
        assert sess.run(scaled_grad) == pytest.approx(6.0 * 1024)


def test_exponential_manager_scale_is_the_loss_scale_variable():
    manager = ExponentialUpdateLossScaleManager(2 ** 10, 3)
    assert manager.get_loss_scale().name == "loss_scale:0"
    assert tf.get_default_graph().get_tensor_by_name("loss_scale:0") is not None


def test_manager_built_inside_control_dependencies_still_initializes():
    trigger = tf.no_op()
    with tf.control_dependencies([trigger]), tf.name_scope("outer"):
        manager = ExponentialUpdateLossScaleManager(8, 2)
    assert manager.get_loss_scale().name == "loss_scale:0"
    assert not manager.get_loss_scale().initializer.control_inputs


def test_overflow_skips_update_keeps_weights_and_global_step_and_lowers_scale():
    manager = ExponentialUpdateLossScaleManager(2 ** 10, 100, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    w, g, global_step, opt, train_op = _model(manager, tf.train.AdamOptimizer(0.1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: 1.0})
        w_before, m_before = sess.run([w, opt.get_slot(w, "m")])
        sess.run(train_op, {g: np.float32(np.inf)})
        assert sess.run(w) == w_before
        assert sess.run(opt.get_slot(w, "m")) == m_before
        assert sess.run(global_step) == 1
        assert sess.run("loss_scale:0") == 2 ** 9
        sess.run(train_op, {g: 1.0})
        assert sess.run(global_step) == 2
        assert sess.run(w) != w_before


def test_scale_shrinks_only_after_n_bad_steps_and_never_below_one():
    manager = ExponentialUpdateLossScaleManager(2.0, 100, decr_every_n_nan_or_inf=2, decr_ratio=0.25)
    w, g, global_step, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: np.float32(np.nan)})
        assert sess.run(manager.get_loss_scale()) == 2.0
        sess.run(train_op, {g: np.float32(np.nan)})
        assert sess.run(manager.get_loss_scale()) == 1.0
        sess.run(train_op, {g: np.float32(np.nan)})
        sess.run(train_op, {g: np.float32(np.nan)})
        assert sess.run(manager.get_loss_scale()) == 1.0
        assert sess.run(global_step) == 0
        assert sess.run(w) == 1.0


def test_bad_steps_need_not_be_consecutive_to_lower_the_scale():
    """tf.contrib's rule, kept by the real manager: finite steps between overflows do not reset the bad count."""
    manager = ExponentialUpdateLossScaleManager(1024.0, 1000, decr_every_n_nan_or_inf=2, decr_ratio=0.5)
    _, g, _, _, train_op = _model(manager)
    scales = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for value in (np.inf, 0.01, np.inf, 0.01, np.inf, 0.01, np.inf):
            sess.run(train_op, {g: np.float32(value)})
            scales.append(sess.run(manager.get_loss_scale()))
    assert scales == [1024, 1024, 512, 512, 512, 512, 256]


def test_arguments_the_real_manager_accepts_are_accepted_with_a_warning():
    """ModelZoo's mlp.py passes (2**32, 1000, 2, 0.8): 0.8 lands in incr_ratio, and hardware runs it like that."""
    with pytest.warns(NpuConfigWarning, match="incr_ratio 0.8 is below 1"):
        manager = ExponentialUpdateLossScaleManager(2 ** 32, 1, 2, 0.8)
    _, g, _, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: 0.01})
        assert sess.run(manager.get_loss_scale()) == pytest.approx(2 ** 32 * 0.8)


def test_fixed_manager_names_its_scale_loss_scale_and_reports_its_check():
    manager = FixedLossScaleManager(16.0, enable_overflow_check=False)
    assert tf.get_default_graph().get_tensor_by_name("loss_scale:0") is manager.get_loss_scale()
    assert manager.get_enable_overflow_check() is False
    assert ExponentialUpdateLossScaleManager(8, 2).get_enable_overflow_check() is True


def test_scale_grows_after_n_good_steps():
    manager = ExponentialUpdateLossScaleManager(4.0, 3, incr_ratio=2)
    w, g, global_step, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(train_op, {g: 0.01})
        assert sess.run(manager.get_loss_scale()) == 4.0
        sess.run(train_op, {g: 0.01})
        assert sess.run(manager.get_loss_scale()) == 8.0
        assert sess.run(global_step) == 3
        assert sess.run(w) == pytest.approx(1.0 - 3 * 0.01)


def test_a_bad_step_resets_the_good_step_count():
    manager = ExponentialUpdateLossScaleManager(4.0, 2, decr_every_n_nan_or_inf=5)
    _, g, _, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for value in (0.01, np.inf, 0.01):
            sess.run(train_op, {g: np.float32(value)})
        assert sess.run(manager.get_loss_scale()) == 4.0
        sess.run(train_op, {g: 0.01})
        assert sess.run(manager.get_loss_scale()) == 8.0


def test_scale_is_capped():
    manager = ExponentialUpdateLossScaleManager(1e38, 1, incr_ratio=2)
    _, g, _, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: 1e-30})
        assert sess.run(manager.get_loss_scale()) == pytest.approx(1e38)


@pytest.fixture
def sat_mode():
    """Set the device overflow mode for one test, then restore the soc default."""
    def set_mode(mode):
        npu_plugin.set_device_sat_mode(mode)
    yield set_mode
    soc.set_device_saturation(None)


def test_saturation_mode_applies_a_large_float32_gradient(sat_mode):
    """On the NPU a float32 result overflows nothing, whatever its size; float16 overflow, which the emulator's
    float16 ops turn into Inf, is caught in both modes (tests/acceptance/test_ported_script_features.py)."""
    sat_mode(npu_plugin.SATURATION_MODE)
    manager = FixedLossScaleManager(4.0)
    w, g, global_step, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: 1e5})
        assert sess.run(w) == pytest.approx(1.0 - 1e5)
        sess.run(train_op, {g: np.float32(np.inf)})
        assert sess.run(global_step) == 1


def test_inf_nan_mode_applies_large_finite_gradients(sat_mode):
    sat_mode(npu_plugin.INF_NAN_MODE)
    w, g, global_step, _, train_op = _model(FixedLossScaleManager(4.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: 1e5})
        assert sess.run(w) == pytest.approx(1.0 - 1e5)
        sess.run(train_op, {g: np.float32(np.inf)})
        assert sess.run(global_step) == 1


def test_default_soc_ascend910_is_saturation_mode_and_910b_is_inf_nan(monkeypatch):
    monkeypatch.delenv("NPU_BRIDGE_SOC", raising=False)
    assert not npu_plugin.is_inf_nan_enabled()
    monkeypatch.setenv("NPU_BRIDGE_SOC", "Ascend910B3")
    assert npu_plugin.is_inf_nan_enabled()


def test_fixed_manager_without_overflow_check_always_applies():
    manager = FixedLossScaleManager(2.0, enable_overflow_check=False)
    w, g, global_step, _, train_op = _model(manager)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {g: 1e5})
        assert sess.run(global_step) == 1
        assert sess.run(w) == pytest.approx(1.0 - 1e5)


def test_sparse_gradients_are_unscaled():
    table = tf.Variable(np.ones((4, 2), np.float32))
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 3]))
    opt = NPULossScaleOptimizer(tf.train.GradientDescentOptimizer(1.0), FixedLossScaleManager(8.0))
    train_op = opt.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        np.testing.assert_allclose(sess.run(table), [[1, 1], [0, 0], [1, 1], [0, 0]])


def test_unknown_attributes_forward_to_the_wrapped_optimizer():
    inner = tf.train.MomentumOptimizer(0.1, 0.9)
    opt = NPULossScaleOptimizer(inner, FixedLossScaleManager(1))
    assert opt._momentum == inner._momentum
