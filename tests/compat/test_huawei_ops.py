"""The adapter's custom ops (npu_ops, tbe.npu_vector_ops, npu_aicore_ops, npu_cpu_ops, gen_npu_ops) against numpy
references of their documented rules, on real tf.compat.v1 graphs and sessions."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from npu_bridge import tf_adapter
from npu_bridge.estimator import npu_aicore_ops, npu_ops
from npu_bridge.estimator.npu import npu_plugin
from npu_bridge.estimator.npu.npu_dynamic_rnn import DynamicAUGRU, DynamicGRUV2
from npu_bridge.helper import helper
from npu_bridge.npu_cpu import npu_cpu_ops
from npu_bridge.tbe import npu_vector_ops

gen_npu_ops = helper.get_gen_ops()
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def _run(fetches, feed=None, init=True):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _vars(*arrays):
    return [tf.Variable(a, name=f"v{i}") for i, a in enumerate(arrays)]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _adam_state():
    return [RNG.normal(size=(3, 4)).astype(np.float32) for _ in range(2)] + \
        [np.abs(RNG.normal(size=(3, 4))).astype(np.float32), RNG.normal(size=(3, 4)).astype(np.float32)]


def test_adam_apply_one_assign_writes_v_m_and_var_by_the_fused_rule():
    grad, m, v, var = _adam_state()
    tv, tm, tvar = _vars(v, m, var)
    step = npu_ops.adam_apply_one_assign(tf.constant(grad), tv, tm, tvar, 0.01, 0.9, 0.1, 0.999, 0.001, 1e-6)
    assert isinstance(step, tf.Operation)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        new_v, new_m, new_var = sess.run([tv, tm, tvar])
    expected_v = 0.999 * v + 0.001 * grad ** 2
    expected_m = 0.9 * m + 0.1 * grad
    np.testing.assert_allclose(new_v, expected_v, rtol=1e-6)
    np.testing.assert_allclose(new_m, expected_m, rtol=1e-6)
    np.testing.assert_allclose(new_var, var - 0.01 * expected_m / (np.sqrt(expected_v) + 1e-6), rtol=1e-5)


def test_adam_apply_one_with_decay_assign_adds_decoupled_weight_decay():
    grad, m, v, var = _adam_state()
    tv, tm, tvar = _vars(v, m, var)
    step = npu_ops.adam_apply_one_with_decay_assign(grad, tv, tm, tvar, 0.01, 0.9, 0.1, 0.999, 0.001, 0.02, 1e-6)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        new_var = sess.run(tvar)
    expected_v = 0.999 * v + 0.001 * grad ** 2
    expected_m = 0.9 * m + 0.1 * grad
    update = expected_m / (np.sqrt(expected_v) + 1e-6) + 0.02 * var
    np.testing.assert_allclose(new_var, var - 0.01 * update, rtol=1e-5)


def test_assigning_ops_write_resource_variables_too():
    grad, m, v, var = _adam_state()
    tv, tm, tvar = [tf.Variable(a, use_resource=True) for a in (v, m, var)]
    step = npu_ops.adam_apply_one_assign(grad, tv, tm, tvar, 0.01, 0.9, 0.1, 0.999, 0.001, 1e-6)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        np.testing.assert_allclose(sess.run(tm), 0.9 * m + 0.1 * grad, rtol=1e-6)


def test_assigning_ops_refuse_a_tensor_where_a_variable_is_written():
    with pytest.raises(TypeError, match=r"adam_apply_one_assign: input1 \(v\) must be a tf.Variable"):
        npu_ops.adam_apply_one_assign(tf.ones([2]), tf.ones([2]), tf.ones([2]), tf.ones([2]), 0.1, 0.9, 0.1, 0.9,
                                      0.1, 1e-6)


def test_lamb_steps_follow_the_bias_corrected_rule_and_the_trust_ratio():
    grad, m, v, var = _adam_state()
    tv, tm, tvar = _vars(v, m, var)
    steps = tf.constant(3.0)
    update, next_v, next_m = npu_vector_ops.lamb_apply_optimizer_assign(
        grad, tv, tm, tvar, 0.9, 0.1, 0.999, 0.001, 1e-6, steps, 1.0, 0.01)
    w_norm = tf.norm(tvar)
    g_norm = tf.norm(update)
    new_var = npu_vector_ops.lamb_apply_weight_assign(w_norm, g_norm, 0.1, update, tvar)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_update, got_v, got_m = sess.run([update, next_v, next_m])
        assert np.array_equal(sess.run(tv), got_v) and np.array_equal(sess.run(tm), got_m)
        got_var = sess.run(new_var)
        assert np.array_equal(sess.run(tvar), got_var)
    expected_v = 0.999 * v + 0.001 * grad ** 2
    expected_m = 0.9 * m + 0.1 * grad
    expected_update = (expected_m / (1 - 0.9 ** 3)) / (np.sqrt(expected_v / (1 - 0.999 ** 3)) + 1e-6) + 0.01 * var
    np.testing.assert_allclose(got_v, expected_v, rtol=1e-6)
    np.testing.assert_allclose(got_update, expected_update, rtol=1e-5)
    # the weight step runs after the first fetch wrote v and m again: its update is the second step's
    second_v = 0.999 * expected_v + 0.001 * grad ** 2
    second_m = 0.9 * expected_m + 0.1 * grad
    second_update = (second_m / (1 - 0.9 ** 3)) / (np.sqrt(second_v / (1 - 0.999 ** 3)) + 1e-6) + 0.01 * var
    ratio = np.linalg.norm(var) / np.linalg.norm(second_update)
    np.testing.assert_allclose(got_var, var - 0.1 * ratio * second_update, rtol=1e-4)


def test_lamb_weight_step_uses_ratio_one_when_a_norm_is_zero():
    var = tf.Variable(np.ones(3, np.float32))
    new_var = npu_vector_ops.lamb_apply_weight_assign(tf.constant(2.0), tf.constant(0.0), 0.5, tf.ones(3), var)
    np.testing.assert_allclose(_run(new_var), np.full(3, 0.5))


def test_lars_scales_each_gradient_by_the_trust_coefficient():
    w = RNG.normal(size=(5,)).astype(np.float32)
    g = RNG.normal(size=(5,)).astype(np.float32)
    coeff = 0.001 * np.linalg.norm(w) / (np.linalg.norm(g) + 0.1 * np.linalg.norm(w) + 1e-5)
    expected = coeff * (g + 0.1 * w)
    lars, = npu_ops.LARS([tf.constant(w)], [tf.constant(g)], 0.1)
    v2 = npu_ops.LARSV2(w, g, 0.1, 0.5)
    clipped = npu_ops.lars_v2(w, g, 0.1, 0.5, hyperpara=100.0, use_clip=True)
    got_lars, got_v2, got_clipped = _run([lars, v2, clipped], init=False)
    np.testing.assert_allclose(got_lars, expected, rtol=1e-5)
    np.testing.assert_allclose(got_v2, expected, rtol=1e-5)
    big = 100.0 * np.linalg.norm(w) / (np.linalg.norm(g) + 0.1 * np.linalg.norm(w) + 1e-5)
    np.testing.assert_allclose(got_clipped, min(big / 0.5, 1.0) * (g + 0.1 * w), rtol=1e-5)
    with pytest.raises(ValueError, match="inputs_w and inputs_g must pair up, got 1 weights and 2 gradients"):
        npu_ops.LARS([w], [g, g], 0.1)


def test_dropout_mask_is_packed_bits_and_do_mask_applies_them():
    x = RNG.normal(size=(3, 50)).astype(np.float32)
    mask = gen_npu_ops.drop_out_gen_mask(tf.shape(x), 0.7, 5, 9)
    y = gen_npu_ops.drop_out_do_mask(x, mask, 0.7)
    again = gen_npu_ops.drop_out_gen_mask(tf.shape(x), 0.7, 5, 9)
    got_mask, got_y, got_again = _run([mask, y, again], init=False)
    assert got_mask.dtype == np.uint8 and got_mask.shape == (32,)      # 150 bits -> 2 blocks of 128 -> 32 bytes
    np.testing.assert_array_equal(got_mask, got_again)                  # seeded: the same mask each draw
    bits = np.unpackbits(got_mask, bitorder="little")[:150].reshape(3, 50)
    np.testing.assert_allclose(got_y, x * bits / np.float32(0.7), rtol=1e-6)
    assert 0.5 < bits.mean() < 0.9


def test_dropout_v3_mask_is_fractal_for_aligned_shapes_and_a_vector_otherwise():
    x = RNG.normal(size=(2, 32, 16)).astype(np.float32)
    mask = gen_npu_ops.drop_out_gen_mask_v3(tf.shape(x), 0.5, 1, 2)
    y = gen_npu_ops.drop_out_do_mask_v3(x, mask, 0.5)
    vector_mask = gen_npu_ops.drop_out_gen_mask_v3(tf.constant([3, 5]), 0.5, 1, 2)
    got_mask, got_y, got_vector = _run([mask, y, vector_mask], init=False)
    assert got_mask.shape == (2, 1, 2, 16, 16) and set(np.unique(got_mask)) <= {0, 1}
    keep = got_mask.transpose(0, 2, 3, 1, 4).reshape(2, 32, 16)        # [n/16, m/16, m%16, n%16] -> [m, n]
    np.testing.assert_allclose(got_y, x * keep / 0.5, rtol=1e-6)
    assert got_vector.shape == (16,)


def test_dropout_v3_keeps_the_scale_and_the_fraction():
    x = tf.ones([64, 64])
    y = npu_ops.dropout_v3(x, 0.8)
    got = _run(y, init=False)
    assert set(np.round(np.unique(got), 4)) <= {0.0, 1.25}
    assert 0.75 < (got > 0).mean() < 0.85
    assert npu_aicore_ops.dropout_v3(x, 1.0) is x


def test_fast_gelu_and_its_gradient_match_x_sigmoid_1702x():
    x = np.linspace(-12, 12, 49).astype(np.float32)
    tx = tf.constant(x)
    y = npu_ops.fast_gelu(tx)
    grad = npu_ops.fast_gelu_grad(tf.ones_like(tx), tx)
    autograd = tf.gradients(y, tx)[0]
    got_y, got_grad, got_auto = _run([y, grad, autograd], init=False)
    s = _sigmoid(1.702 * x.astype(np.float64))
    np.testing.assert_allclose(got_y, x * s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_grad, s + 1.702 * x * s * (1 - s), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_auto, got_grad, rtol=1e-4, atol=1e-6)


def test_fused_layer_norm_and_its_gradient():
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    gamma = RNG.normal(size=(6,)).astype(np.float32)
    beta = RNG.normal(size=(6,)).astype(np.float32)
    tx = tf.constant(x)
    y, mean, variance = npu_ops.fused_layer_norm(tx, gamma, beta, begin_norm_axis=-1, begin_params_axis=-1)
    dy = tf.constant(RNG.normal(size=(4, 6)).astype(np.float32))
    pd_x, pd_gamma, pd_beta = npu_ops.fused_layer_norm_grad(dy, tx, variance, mean, gamma)
    auto_x = tf.gradients(y, tx, dy)[0]
    got = _run([y, mean, variance, pd_x, auto_x, pd_beta], init=False)
    expected_mean = x.mean(axis=1, keepdims=True)
    expected_var = x.var(axis=1, keepdims=True)
    np.testing.assert_allclose(got[0], (x - expected_mean) / np.sqrt(expected_var + 1e-7) * gamma + beta,
                               rtol=1e-4, atol=1e-5)
    assert got[1].shape == (4, 1) and got[2].shape == (4, 1)
    np.testing.assert_allclose(got[3], got[4], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got[5], _run(dy, init=False).sum(axis=0), rtol=1e-5)
    with pytest.raises(ValueError, match="begin_norm_axis=2 is out of range for an input of rank 2"):
        npu_ops.fused_layer_norm(tx, gamma, beta, begin_norm_axis=2)


def test_basic_lstm_cell_is_one_lstm_step_in_lstmcell_layout():
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    h = RNG.normal(size=(2, 4)).astype(np.float32)
    c = RNG.normal(size=(2, 4)).astype(np.float32)
    w = RNG.normal(size=(7, 16)).astype(np.float32)
    b = RNG.normal(size=(16,)).astype(np.float32)
    outputs = npu_ops.basic_lstm_cell(x, h, c, w, b, keep_prob=1.0, forget_bias=1.0, state_is_tuple=True,
                                      activation="tanh")
    ct, ht, it, jt, ft, ot, tanhct = _run(list(outputs), init=False)
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ w + b, 4, axis=1)
    expected_c = _sigmoid(f + 1.0) * c + _sigmoid(i) * np.tanh(j)
    np.testing.assert_allclose(ct, expected_c, rtol=1e-5)
    np.testing.assert_allclose(ht, _sigmoid(o) * np.tanh(expected_c), rtol=1e-5)
    np.testing.assert_allclose(tanhct, np.tanh(expected_c), rtol=1e-5)
    with pytest.raises(ValueError, match="keep_prob=0.5 is not supported"):
        npu_ops.basic_lstm_cell(x, h, c, w, b, 0.5, 1.0, True, "tanh")


def _numpy_gru(x, wi, wh, bi, bh, att=None, lengths=None):
    hidden = wh.shape[0]
    h = np.zeros((x.shape[1], hidden), np.float64)
    outputs = []
    for t in range(x.shape[0]):
        xz, xr, xn = np.split(x[t] @ wi + bi, 3, axis=1)
        hz, hr, hn = np.split(h @ wh + bh, 3, axis=1)
        z = _sigmoid(xz + hz)
        r = _sigmoid(xr + hr)
        n = np.tanh(xn + r * hn)
        if att is not None:
            z = (1 - att[t][:, None]) * z
        new_h = z * h + (1 - z) * n
        if lengths is not None:
            new_h = np.where((t < lengths)[:, None], new_h, h)
        h = new_h
        outputs.append(h)
    return np.stack(outputs)


def test_dynamic_gru_v2_and_augru_match_the_gru_equations():
    x = RNG.normal(size=(5, 3, 4)).astype(np.float32)
    att = RNG.uniform(size=(5, 3)).astype(np.float32)
    lengths = np.array([5, 2, 1], np.int32)
    gru = DynamicGRUV2(6, tf.float32)
    y, output_h, update, reset, new, hidden_new = gru(tf.constant(x))
    augru = DynamicAUGRU(6, tf.float32)
    augru_outputs = augru(tf.constant(x), tf.constant(att), seq_length=tf.constant(lengths))
    assert [v.name for v in tf.trainable_variables()][:4] == [
        "dynamic_gruv2/dynamicgruv2/weight_input:0", "dynamic_gruv2/dynamicgruv2/weight_hidden:0",
        "dynamic_gruv2/dynamicgruv2/bias_input:0", "dynamic_gruv2/dynamicgruv2/bias_hidden:0"]
    grads = tf.gradients(tf.reduce_sum(y), list(gru._weights.values()))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        weights = sess.run([gru._weights[k] for k in ("weight_input", "weight_hidden", "bias_input", "bias_hidden")])
        au_weights = sess.run([augru._weights[k] for k in ("weight_input", "weight_hidden", "bias_input",
                                                           "bias_hidden")])
        got_y, got_h, got_update, got_au, got_grads = sess.run([y, output_h, update, augru_outputs[0], grads])
    assert len(augru_outputs) == 7 and got_update.shape == (5, 3, 6)
    np.testing.assert_allclose(got_y, _numpy_gru(x, *weights), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got_y, got_h)
    np.testing.assert_allclose(got_au, _numpy_gru(x, *au_weights, att=att, lengths=lengths), rtol=1e-4, atol=1e-5)
    assert all(np.isfinite(g).all() and np.abs(g).sum() > 0 for g in got_grads)
    with pytest.raises(ValueError, match="DynamicGRUV2: direction='BIDIRECTIONAL' is not supported"):
        DynamicGRUV2(6, tf.float32, direction="BIDIRECTIONAL")(tf.constant(x))


def test_random_choice_with_mask_samples_true_positions_without_replacement():
    flags = np.zeros((6, 5), bool)
    flags[[0, 1, 4, 5], [2, 0, 3, 4]] = True
    y, mask = npu_cpu_ops.randomchoicewithmask(tf.constant(flags), 6)
    got_y, got_mask = _run([y, mask], init=False)
    assert got_y.shape == (6, 2) and got_mask.tolist() == [True] * 4 + [False] * 2
    chosen = {tuple(row) for row in got_y[:4]}
    assert chosen == {(0, 2), (1, 0), (4, 3), (5, 4)}
    assert not got_y[4:].any()
    with pytest.raises(NotImplementedError, match="npu_cpu_ops.embeddingrankid: the host-memory embedding ops"):
        npu_cpu_ops.embeddingrankid(tf.zeros([1]), tf.zeros([1]))
    with pytest.raises(NotImplementedError, match="npu_plugin.malloc_shared_memory: host-memory embedding tables"):
        npu_plugin.malloc_shared_memory("host_params", [10, 4], tf_adapter.DT_FLOAT)


def test_the_module_paths_ported_scripts_import_exist():
    from npu_bridge.estimator.npu import npu_loss_scale_optimizer
    from npu_bridge.estimator.npu.npu_config import NpuExecutePlacement
    from npu_bridge.estimator.npu.npu_scope import npu_variable_scope

    assert npu_ops.gen_npu_ops is gen_npu_ops is npu_loss_scale_optimizer.gen_npu_ops
    assert npu_loss_scale_optimizer.FixedLossScaleManager.__module__.endswith("npu_loss_scale_manager")
    assert npu_aicore_ops.npu_aicore_ops is gen_npu_ops
    assert (tf_adapter.DT_FLOAT, tf_adapter.DT_FLOAT16, tf_adapter.DT_INT32) == (0, 1, 3)
    with npu_variable_scope(placement=NpuExecutePlacement.HOST):
        table = tf.get_variable("table", [4, 2])
    assert table.op.get_attr("_variable_placement") == b"host"
    with pytest.raises(ValueError, match="placement must be an NpuExecutePlacement member, got 'host'"):
        npu_variable_scope(placement="host")


def test_set_iterations_var_hook_loads_the_loop_count_into_the_session():
    from npu_bridge.estimator.npu import util
    from npu_bridge.estimator.npu.npu_hook import SetIterationsVarHook

    counter = tf.Variable(0, name="counter")
    iteration_op = util.create_iteration_per_loop_var(tf.assign_add(counter, 1).op)
    with tf.train.MonitoredSession(hooks=[SetIterationsVarHook(3)]) as sess:
        assert sess.run(tf.get_default_graph().get_tensor_by_name("npu_runconfig/iterations_per_loop:0")) == 3
        assert iteration_op.get_attr("_npu_iterations_per_loop") == 3
    with pytest.raises(ValueError, match="iterations_per_loop must be a positive integer, got 0"):
        SetIterationsVarHook(0)
