"""The smaller contrib areas against TF 1.15's formulas (opt, image, seq2seq, sparsemax, mixed_precision), the
clear errors (quantize, names not provided), and that contrib costs nothing when a script never names it."""
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf


v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("tf1_graph")


def _run(*fetches, feed=None):
    with v1.Session() as sess:
        sess.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
        return sess.run(list(fetches), feed)


def test_lazy_adam_updates_only_the_rows_of_a_sparse_gradient():
    table = v1.get_variable("table", initializer=np.ones((4, 2), np.float32))
    loss = tf.reduce_sum(tf.gather(table, [1]))
    train = v1.contrib.opt.LazyAdamOptimizer(0.1).minimize(loss)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(train)
        value = sess.run(table)
    # first Adam step moves the touched row by lr (m / sqrt(v) = 1); the others keep their value
    np.testing.assert_allclose(value[1], 1 - 0.1, rtol=1e-5)
    np.testing.assert_array_equal(value[[0, 2, 3]], 1.0)


def test_nadam_and_adamw_follow_tf115s_update_rules():
    opt = v1.contrib.opt
    w = v1.get_variable("w", initializer=np.array([1.0, -2.0], np.float32))
    u = v1.get_variable("u", initializer=np.array([1.0, -2.0], np.float32))
    nadam = opt.NadamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
    adamw = opt.AdamWOptimizer(weight_decay=0.5, learning_rate=0.1).minimize(tf.reduce_sum(u * u))
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run([nadam, adamw])
        w_value, u_value = sess.run([w, u])
    # Nadam's first step: lr * (beta1 m + (1 - beta1) g) / (sqrt(v) + eps) / ... with bias corrections
    g = np.array([2.0, -4.0])
    m, v_ = 0.1 * g, 0.001 * g * g
    lr = 0.1 * np.sqrt(1 - 0.999) / (1 - 0.9)
    np.testing.assert_allclose(w_value, [1.0, -2.0] - lr * (0.9 * m + 0.1 * g) / (np.sqrt(v_) + 1e-8), rtol=1e-4)
    # AdamW: decay first (u - 0.5 u), then Adam's step of lr on the gradient taken before the decay
    np.testing.assert_allclose(u_value, 0.5 * np.array([1.0, -2.0]) - 0.1 * np.sign(g), rtol=1e-4)


def test_lars_scales_the_step_by_the_trust_ratio():
    w = v1.get_variable("w", initializer=np.array([3.0, 4.0], np.float32))
    train = v1.contrib.opt.LARSOptimizer(1.0, momentum=0.0, weight_decay=0.0, eeta=0.01).minimize(
        tf.reduce_sum(w))
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(train)
        value = sess.run(w)
    trust = 0.01 * 5.0 / np.sqrt(2.0)        # eeta |w| / |g|
    np.testing.assert_allclose(value, [3.0 - trust, 4.0 - trust], rtol=1e-5)


def test_image_rotate_translate_and_yiq_identity():
    image = np.arange(9, dtype=np.float32).reshape(3, 3, 1)
    rotated, shifted, same = _run(v1.contrib.image.rotate(image, np.pi / 2),
                                  v1.contrib.image.translate(image, [1, 0]),
                                  v1.contrib.image.random_hsv_in_yiq(image.repeat(3, axis=2) / 8.0))
    np.testing.assert_allclose(rotated[..., 0], np.rot90(image[..., 0]), atol=1e-5)
    np.testing.assert_array_equal(shifted[..., 0], [[0, 0, 1], [0, 3, 4], [0, 6, 7]])
    np.testing.assert_allclose(same, image.repeat(3, axis=2) / 8.0, atol=1e-3)


def test_seq2seq_tile_batch_hardmax_and_sequence_loss():
    seq2seq = v1.contrib.seq2seq
    logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], np.float32))
    tiled, hard, loss, per_step = _run(
        seq2seq.tile_batch(tf.constant([[1, 2], [3, 4]]), 2), seq2seq.hardmax(tf.constant([[0.1, 0.7, 0.2]])),
        seq2seq.sequence_loss(tf.constant(logits), tf.constant([[0, 0]]), tf.constant([[1.0, 0.0]])),
        seq2seq.sequence_loss(tf.constant(logits), tf.constant([[0, 1]]), tf.ones([1, 2]),
                              average_across_timesteps=False))
    np.testing.assert_array_equal(tiled, [[1, 2], [1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(hard, [[0, 1, 0]])
    assert loss == pytest.approx(-np.log(0.5), rel=1e-5)        # the second step has weight 0
    np.testing.assert_allclose(per_step, [-np.log(0.5), -np.log(0.1)], rtol=1e-5)


def test_sparsemax_projects_onto_the_simplex():
    out, = _run(v1.contrib.sparsemax.sparsemax(tf.constant([[1.0, 0.5, -1.0], [0.0, 0.0, 0.0]])))
    np.testing.assert_allclose(out, [[0.75, 0.25, 0.0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_mixed_precision_loss_scale_optimizer_skips_a_non_finite_step():
    mp = v1.contrib.mixed_precision
    w = v1.get_variable("w", initializer=1.0)
    scale = v1.placeholder(tf.float32, [])
    manager = mp.ExponentialUpdateLossScaleManager(init_loss_scale=4.0, incr_every_n_steps=100)
    train = mp.LossScaleOptimizer(v1.train.GradientDescentOptimizer(0.5), manager).minimize(w * scale)
    names = sorted(v.op.name for v in v1.global_variables())
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(train, {scale: np.inf})
        after_overflow = sess.run(w)
        sess.run(train, {scale: 1.0})
        after_step = sess.run(w)
    assert names == ["bad_steps", "good_steps", "loss_scale", "w"]
    assert after_overflow == 1.0 and after_step == pytest.approx(0.5)


def test_metrics_lookup_summary_and_util():
    accuracy, update = v1.contrib.metrics.streaming_accuracy(tf.constant([1, 0, 1]), tf.constant([1, 1, 1]))
    table = v1.contrib.lookup.index_table_from_tensor(tf.constant(["a", "b"]))
    with v1.Session() as sess:
        sess.run([v1.local_variables_initializer(), v1.tables_initializer()])
        sess.run(update)
        assert sess.run(accuracy) == pytest.approx(2 / 3)
        assert sess.run(table.lookup(tf.constant(["b"]))).tolist() == [1]
    assert v1.contrib.util.constant_value(tf.constant(5)) == 5
    assert callable(v1.contrib.summary.scalar) and callable(v1.contrib.summary.always_record_summaries)


def test_quantize_rewrites_and_missing_names_raise_one_clear_error():
    from npu_bridge.tf1compat.contrib.removed import ContribRemovedError

    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.quantize\.create_training_graph is not provided.*"
                                                  r"tensorflow_model_optimization"):
        v1.contrib.quantize.create_training_graph(quant_delay=0)
    with pytest.raises(ImportError, match=r"tf\.contrib\.seq2seq\.ScheduledOutputTrainingHelper .*"
                                          r"tensorflow_addons\.seq2seq"):
        from tensorflow.contrib.seq2seq import ScheduledOutputTrainingHelper  # noqa: F401
    with pytest.raises(ImportError, match=r"tf\.contrib\.gan is not provided.*tensorflow_gan"):
        import tensorflow.contrib.gan  # noqa: F401
    with pytest.raises(ImportError, match=r"tf\.contrib\.cudnn_rnn\.CudnnRNNTanh is not provided"):
        v1.contrib.cudnn_rnn.CudnnRNNTanh  # noqa: B018  (the lookup is what raises)


@pytest.mark.parametrize("first_line", ["", "from npu_bridge.npu_init import *\n"])
def test_contrib_costs_nothing_when_a_script_never_names_it(tmp_path, first_line):
    # a port's own start (npu_init's star import, with everything Huawei's adapter exports) loads no contrib either
    script = tmp_path / "plain.py"
    script.write_text(first_line + "import sys\nimport tensorflow as tf\nx = tf.placeholder(tf.float32, [2])\n"
                      "print(sorted(m for m in sys.modules if m.startswith(('tf_slim', 'npu_bridge.tf1compat.contrib'))"
                      "))\n")
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(script)], check=False, capture_output=True,
                            text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    assert result.returncode == 0, result.stderr
    # only the package itself (a docstring, the error table and two restored names), none of its submodules
    assert result.stdout.strip().splitlines()[-1] == str(
        ["npu_bridge.tf1compat.contrib", "npu_bridge.tf1compat.contrib.moved_names",
         "npu_bridge.tf1compat.contrib.removed"])


def test_tfprof_model_analyzer_counts_the_parameters():
    from tensorflow.contrib import tfprof as contrib_tfprof

    v1.get_variable("w", [3, 4])
    analysis = contrib_tfprof.model_analyzer.print_model_analysis(
        v1.get_default_graph(), tfprof_options=contrib_tfprof.model_analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS)
    assert analysis.total_parameters == 12
