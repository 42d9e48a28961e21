"""The rest of tf.contrib, part A: Huawei's older contrib paths for npu_bridge (contrib.hccl, contrib.offline_train)
and the contrib symbols rebuilt on TensorFlow 2's public ops, checked against TF 1.15's documented behaviour."""
import importlib

import numpy as np
import pytest
import tensorflow as tf


pytestmark = pytest.mark.usefixtures("installed")


@pytest.mark.parametrize("old, new", [
    ("tensorflow.contrib.hccl.python.ops.hccl_ops", "npu_bridge.hccl.hccl_ops"),
    ("tensorflow.contrib.offline_train.python.npu.npu_config", "npu_bridge.estimator.npu.npu_config"),
    ("tensorflow.contrib.offline_train.python.npu.npu_estimator", "npu_bridge.estimator.npu.npu_estimator"),
    ("tensorflow.contrib.offline_train.python.npu.npu_optimizer", "npu_bridge.estimator.npu.npu_optimizer"),
    ("tensorflow.contrib.offline_train.python.npu.npu_loss_scale_manager",
     "npu_bridge.estimator.npu.npu_loss_scale_manager"),
    ("tensorflow.contrib.offline_train.python.npu_ops", "npu_bridge.estimator.npu_ops"),
    ("tensorflow.contrib.offline_train.python.npu_unary_ops", "npu_bridge.estimator.npu_unary_ops"),
])
def test_huaweis_older_contrib_paths_are_the_npu_bridge_modules(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_the_ported_scripts_imports_of_the_older_paths_give_npu_bridges_classes():
    from tensorflow.contrib.hccl.python.ops import hccl_ops
    from tensorflow.contrib.offline_train.python import npu_ops
    from tensorflow.contrib.offline_train.python.npu.npu_config import NPURunConfig
    from tensorflow.contrib.offline_train.python.npu.npu_estimator import NPUEstimator
    from tensorflow.contrib.offline_train.python.npu.npu_optimizer import (
        NPUDistributedOptimizer,
    )

    import npu_bridge.estimator.npu_ops as current_npu_ops
    from npu_bridge.estimator.npu.npu_config import NPURunConfig as CurrentRunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator as CurrentEstimator
    from npu_bridge.estimator.npu.npu_optimizer import (
        NPUDistributedOptimizer as CurrentOptimizer,
    )
    from npu_bridge.hccl import hccl_ops as current_hccl_ops

    assert (hccl_ops, npu_ops, NPURunConfig, NPUEstimator, NPUDistributedOptimizer) == (
        current_hccl_ops, current_npu_ops, CurrentRunConfig, CurrentEstimator, CurrentOptimizer)
    assert callable(hccl_ops.allreduce) and callable(npu_ops.dropout)


def _crf_reference(scores, tags, length, transitions):
    """TF 1.15's crf log-likelihood of one sequence by enumerating every tag sequence (numpy)."""
    import itertools

    def sequence_score(path):
        return (sum(scores[t, path[t]] for t in range(length))
                + sum(transitions[path[t - 1], path[t]] for t in range(1, length)))

    paths = list(itertools.product(range(scores.shape[1]), repeat=length))
    all_scores = np.array([sequence_score(path) for path in paths])
    log_norm = np.log(np.sum(np.exp(all_scores)))
    best = paths[int(np.argmax(all_scores))]
    return sequence_score(tags[:length]) - log_norm, list(best), float(np.max(all_scores))


def test_crf_log_likelihood_and_decoding_match_enumerating_every_tag_sequence():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(3, 4, 3)).astype(np.float32)
    tags = rng.integers(0, 3, size=(3, 4)).astype(np.int32)
    lengths = np.array([4, 2, 1], np.int32)
    with tf.Graph().as_default():
        inputs = tf.compat.v1.placeholder(tf.float32, [None, None, 3])
        with tf.compat.v1.variable_scope("crf"):
            likelihood, transitions = tf.compat.v1.contrib.crf.crf_log_likelihood(inputs, tags, lengths)
        decoded, best_scores = tf.compat.v1.contrib.crf.crf_decode(inputs, transitions, lengths)
        assert transitions.name == "crf/transitions:0" and transitions.shape == (3, 3)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got, matrix, got_tags, got_best = sess.run([likelihood, transitions, decoded, best_scores],
                                                       {inputs: scores})
    for b, length in enumerate(lengths):
        expected, best, best_score = _crf_reference(scores[b], tags[b], length, matrix)
        np.testing.assert_allclose(got[b], expected, rtol=1e-5, atol=1e-5)
        assert list(got_tags[b]) == best + [0] * (4 - length)
        np.testing.assert_allclose(got_best[b], best_score, rtol=1e-5)
        numpy_tags, numpy_score = tf.compat.v1.contrib.crf.viterbi_decode(scores[b, :length], matrix)
        assert numpy_tags == best and abs(numpy_score - best_score) < 1e-4


def test_contrib_hccl_and_offline_train_are_reachable_as_attributes_too():
    # attribute paths along Huawei's older names (removed.ModulePath): each name is npu_bridge's own
    assert tf.compat.v1.contrib.hccl.get_rank_id is importlib.import_module("npu_bridge.hccl").get_rank_id
    assert tf.compat.v1.contrib.offline_train.python.npu_ops is importlib.import_module("npu_bridge.estimator.npu_ops")


def test_percentile_picks_lower_higher_and_nearest_values_over_the_given_axes():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 5, 4)).astype(np.float32)
    percentile = tf.compat.v1.contrib.distributions.percentile
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        got = sess.run({
            "nearest": percentile(x, q=30.0, axis=[1, 2]),
            "lower": percentile(x, q=30.0, axis=[1, 2], interpolation="lower"),
            "higher": percentile(x, q=30.0, axis=[1, 2], interpolation="higher"),
            "kept": percentile(x, q=99, axis=[1, 2], keep_dims=True),
            "all": percentile(x, q=50),
            "last": percentile(x, q=75, axis=-1),
        })
    flat = x.reshape(2, -1)
    # 20 values: position 19 * 0.3 = 5.7 from the lowest, between the 6th and 7th smallest
    np.testing.assert_array_equal(got["lower"], np.sort(flat, 1)[:, 5])
    np.testing.assert_array_equal(got["higher"], np.sort(flat, 1)[:, 6])
    np.testing.assert_array_equal(got["nearest"], np.percentile(flat, 30, axis=1, method="nearest"))
    assert got["kept"].shape == (2, 1, 1)
    np.testing.assert_array_equal(got["kept"][:, 0, 0], np.percentile(flat, 99, axis=1, method="nearest"))
    # a tie (40 values: 19.5 from either end) rounds to even counted from the highest, as TF 1.15 did: the 20th
    # smallest, where numpy's "nearest" counts from the lowest and takes the 21st
    np.testing.assert_array_equal(got["all"], np.sort(x, axis=None)[19])
    np.testing.assert_array_equal(got["last"], np.percentile(x, 75, axis=-1, method="nearest"))
    with pytest.raises(ValueError, match="interpolation must be one of"):
        percentile(x, 50, interpolation="linear")


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_nas_cell_computes_tf_1_15s_tree_with_its_variable_names():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3)).astype(np.float32)
    with tf.Graph().as_default():
        cell = tf.compat.v1.contrib.rnn.NASCell(4, num_proj=2, use_biases=True)
        state = cell.zero_state(2, tf.float32)
        output, (new_c, new_m) = cell(tf.constant(x), state)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for variable in tf.compat.v1.global_variables():     # a non-zero bias, to check where it is added
                if variable.name.endswith("bias:0"):
                    variable.load(rng.normal(size=variable.shape).astype(np.float32), sess)
            values = {v.name: sess.run(v) for v in tf.compat.v1.global_variables()}
            got, got_c = sess.run([output, new_c])
    assert sorted(values) == ["nas_cell/bias:0", "nas_cell/kernel:0", "nas_cell/projection_weights:0",
                              "nas_cell/recurrent_kernel:0"]
    assert values["nas_cell/kernel:0"].shape == (3, 32) and values["nas_cell/recurrent_kernel:0"].shape == (2, 32)
    c_prev, m_prev = np.zeros((2, 4), np.float32), np.zeros((2, 2), np.float32)
    m = np.split(m_prev @ values["nas_cell/recurrent_kernel:0"] + values["nas_cell/bias:0"], 8, axis=1)
    i = np.split(x @ values["nas_cell/kernel:0"], 8, axis=1)
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    l1 = [_sigmoid(i[0] + m[0]), relu(i[1] + m[1]), _sigmoid(i[2] + m[2]), relu(i[3] * m[3]), np.tanh(i[4] + m[4]),
          _sigmoid(i[5] + m[5]), np.tanh(i[6] + m[6]), _sigmoid(i[7] + m[7])]
    c = np.tanh(np.tanh(l1[0] * l1[1]) + c_prev) * np.tanh(l1[2] + l1[3])
    h = np.tanh(c * np.tanh(np.tanh(l1[4] * l1[5]) + _sigmoid(l1[6] + l1[7])))
    np.testing.assert_allclose(got_c, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, h @ values["nas_cell/projection_weights:0"], rtol=1e-5, atol=1e-6)


def test_core_rnn_cell_linear_and_wrappers_have_tf_1_15s_variables():
    from tensorflow.contrib.rnn.python.ops import core_rnn_cell
    from tensorflow.contrib.rnn.python.ops.rnn_cell import _Linear

    assert _Linear is core_rnn_cell._Linear
    a = np.array([[1.0, 2.0]], np.float32)
    b = np.array([[3.0]], np.float32)
    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("gate"):
            linear = _Linear([tf.constant(a), tf.constant(b)], 2, True,
                             bias_initializer=tf.compat.v1.constant_initializer(0.5))
            result = linear([tf.constant(a), tf.constant(b)])
        base = tf.compat.v1.contrib.rnn.BasicRNNCell(3)
        cell = core_rnn_cell.OutputProjectionWrapper(core_rnn_cell.EmbeddingWrapper(base, 10, 4), 5)
        symbols = tf.constant([[1], [7]], tf.int32)
        output, _ = cell(symbols, cell.zero_state(2, tf.float32))
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got, kernel, got_output = sess.run([result, "gate/kernel:0", output])
        names = sorted(v.name for v in tf.compat.v1.global_variables())
    np.testing.assert_allclose(got, np.concatenate([a, b], 1) @ kernel + 0.5, rtol=1e-6)
    assert got_output.shape == (2, 5)
    assert names == ["gate/bias:0", "gate/kernel:0",
                     "output_projection_wrapper/bias:0", "output_projection_wrapper/embedding_wrapper/basic_rnn_cell/bias:0",
                     "output_projection_wrapper/embedding_wrapper/basic_rnn_cell/kernel:0",
                     "output_projection_wrapper/embedding_wrapper/embedding:0", "output_projection_wrapper/kernel:0"]


def test_legacy_seq2seq_rnn_decoder_shares_variables_and_sequence_loss_weights_steps():
    legacy = tf.compat.v1.contrib.legacy_seq2seq
    rng = np.random.default_rng(11)
    logits = [rng.normal(size=(2, 4)).astype(np.float32) for _ in range(3)]
    targets = [np.array([1, 3], np.int32), np.array([0, 2], np.int32), np.array([2, 2], np.int32)]
    weights = [np.array([1.0, 1.0], np.float32), np.array([1.0, 0.5], np.float32), np.array([0.0, 1.0], np.float32)]
    with tf.Graph().as_default():
        cell = tf.compat.v1.contrib.rnn.BasicRNNCell(4)
        inputs = [tf.constant(step) for step in logits]
        outputs, _ = legacy.rnn_decoder(inputs, cell.zero_state(2, tf.float32), cell,
                                        loop_function=lambda previous, step: previous * 2.0)
        names = sorted(v.name for v in tf.compat.v1.global_variables())
        loss = legacy.sequence_loss(logits, targets, weights)
        total = legacy.sequence_loss(logits, targets, weights, average_across_timesteps=False,
                                     average_across_batch=False)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got_outputs, kernel, bias, got_loss, got_total = sess.run(
                [outputs, "rnn_decoder/basic_rnn_cell/kernel:0", "rnn_decoder/basic_rnn_cell/bias:0", loss, total])
    assert names == ["rnn_decoder/basic_rnn_cell/bias:0", "rnn_decoder/basic_rnn_cell/kernel:0"]
    state = np.zeros((2, 4), np.float32)
    step_input = logits[0]
    for expected in got_outputs:      # later steps are fed twice the previous output (the loop function)
        state = np.tanh(np.concatenate([step_input, state], 1) @ kernel + bias)
        np.testing.assert_allclose(expected, state, rtol=1e-5, atol=1e-6)
        step_input = state * 2.0
    crossent = [-(logit - np.log(np.exp(logit).sum(1, keepdims=True)))[np.arange(2), target]
                for logit, target in zip(logits, targets)]
    weighted = sum(c * w for c, w in zip(crossent, weights))
    np.testing.assert_allclose(got_total, weighted.sum(), rtol=1e-5)
    np.testing.assert_allclose(got_loss, (weighted / (sum(weights) + 1e-12)).sum() / 2, rtol=1e-5)
    with pytest.raises(ValueError, match="same length; got 3, 2 and 3"):
        legacy.sequence_loss(logits, targets[:2], weights)


def test_learn_datasets_base_has_tf_1_15s_tuples_and_maybe_download_keeps_an_existing_file(tmp_path):
    from tensorflow.contrib.learn.python.learn.datasets import base
    from tensorflow.examples.tutorials.mnist import input_data

    assert base.Datasets is input_data.Datasets
    assert base.Datasets(train=1, validation=2, test=None)._fields == ("train", "validation", "test")
    assert base.Dataset(data=[1], target=[0]).target == [0]
    (tmp_path / "data.csv").write_text("1,2\n")
    assert base.maybe_download("data.csv", str(tmp_path), "http://unreachable.invalid/x") == str(tmp_path / "data.csv")
    with pytest.raises(OSError, match="could not fetch missing.csv from file:///nonexistent"):
        base.maybe_download("missing.csv", str(tmp_path), "file:///nonexistent/missing.csv")
    assert tf.compat.v1.contrib.learn.ModeKeys.INFER == "infer"


def test_feeding_queue_runner_streams_each_feed_functions_values_into_the_queue():
    v1 = tf.compat.v1
    values = iter(range(100))
    with tf.Graph().as_default():
        fed = v1.placeholder(tf.int32, [])
        queue = v1.FIFOQueue(4, tf.int32)
        runner = v1.contrib.training.FeedingQueueRunner(queue, [queue.enqueue(fed)], queue.close(),
                                                        feed_fns=[lambda: {fed: next(values)}])
        taken = queue.dequeue()
        with v1.Session() as sess:
            coord = v1.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            got = [sess.run(taken) for _ in range(6)]
            coord.request_stop()
            sess.run(queue.close(cancel_pending_enqueues=True))
            coord.join(threads)
        with pytest.raises(ValueError, match="one feed function per enqueue op: got 2 for 1"):
            v1.contrib.training.FeedingQueueRunner(queue, [queue.enqueue(1)], feed_fns=[dict, dict])
    assert got == [0, 1, 2, 3, 4, 5]


def test_moving_average_optimizer_averages_after_each_step_and_its_saver_restores_the_averages(tmp_path):
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        weight = v1.get_variable("w", initializer=np.array([1.0], np.float32))
        optimizer = v1.contrib.opt.MovingAverageOptimizer(v1.train.GradientDescentOptimizer(0.5), average_decay=0.5)
        train = optimizer.minimize(tf.reduce_sum(weight))     # gradient 1: each step w -= 0.5
        saver = optimizer.swapping_saver()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(train)
            sess.run(train)
            average = sess.run("w/ExponentialMovingAverage:0")
            path = saver.save(sess, str(tmp_path / "model"))
        assert float(average[0]) == 0.375       # w: 1 -> 0.5 -> 0; average: 1 -> 0.75 -> 0.375 (decay 0.5)
        with v1.Session() as sess:
            v1.train.Saver([weight]).restore(sess, path)
            restored = sess.run(weight)
    np.testing.assert_allclose(restored, average)
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="call apply_gradients or minimize first"):
        v1.contrib.opt.MovingAverageOptimizer(v1.train.GradientDescentOptimizer(0.5)).swapping_saver()
