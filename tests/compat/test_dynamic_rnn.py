"""DynamicRNN against a hand-written LSTM: all eight outputs and the weight gradient."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from npu_bridge.estimator.npu.npu_dynamic_rnn import DynamicRNN

T, B, I, H = 4, 3, 5, 6


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _manual_lstm(x, w, b, h0, c0, forget_bias):
    h, c = h0, c0
    outputs = {name: [] for name in ("h", "c", "i", "j", "f", "o", "tanhc")}
    for t in range(x.shape[0]):
        gates = np.concatenate([x[t], h], axis=1) @ w + b
        i, j, f, o = np.split(gates, 4, axis=1)
        i, j, f, o = _sigmoid(i), np.tanh(j), _sigmoid(f + forget_bias), _sigmoid(o)
        c = f * c + i * j
        tanhc = np.tanh(c)
        h = o * tanhc
        for name, value in (("h", h), ("c", c), ("i", i), ("j", j), ("f", f), ("o", o), ("tanhc", tanhc)):
            outputs[name].append(value)
    return {name: np.stack(values) for name, values in outputs.items()}


@pytest.mark.parametrize("forget_bias", [0.0, 1.0])
def test_outputs_match_a_manual_lstm(forget_bias):
    rng = np.random.RandomState(0)
    x = rng.randn(T, B, I).astype(np.float32)
    h0 = rng.randn(1, B, H).astype(np.float32)
    c0 = rng.randn(1, B, H).astype(np.float32)
    with tf.Graph().as_default():
        rnn = DynamicRNN(H, tf.float32, forget_bias=forget_bias)
        outputs = rnn(tf.constant(x), init_h=tf.constant(h0), init_c=tf.constant(c0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(outputs)
            w, b = sess.run([rnn._weight, rnn._bias])
    assert len(values) == 8
    y, output_h, output_c, i, j, f, o, tanhc = values
    expected = _manual_lstm(x, w, b, h0[0], c0[0], forget_bias)
    for got, name in ((y, "h"), (output_h, "h"), (output_c, "c"), (i, "i"), (j, "j"), (f, "f"), (o, "o"),
                      (tanhc, "tanhc")):
        assert got.shape == (T, B, H)
        np.testing.assert_allclose(got, expected[name], rtol=1e-5, atol=1e-5, err_msg=name)


def test_weight_gradient_matches_a_manual_lstm_graph():
    rng = np.random.RandomState(1)
    with tf.Graph().as_default():
        x, w, b = (tf.constant(v) for v in (rng.randn(T, B, I).astype(np.float32),
                                             rng.randn(I + H, 4 * H).astype(np.float32) * 0.3,
                                             rng.randn(4 * H).astype(np.float32) * 0.1))
        y = DynamicRNN(H, tf.float32)(x, weight=w, bias=b)[0]
        h = c = tf.zeros([B, H])
        manual = []
        for t in range(T):
            i, j, f, o = tf.split(tf.matmul(tf.concat([x[t], h], 1), w) + b, 4, axis=1)
            c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(j)
            h = tf.sigmoid(o) * tf.tanh(c)
            manual.append(h)
        loss, manual_loss = tf.reduce_sum(y ** 2), tf.reduce_sum(tf.stack(manual) ** 2)
        grads = tf.gradients(loss, [w, b, x])
        manual_grads = tf.gradients(manual_loss, [w, b, x])
        with tf.Session() as sess:
            got, want = sess.run([grads, manual_grads])
    for g, m in zip(got, want):
        np.testing.assert_allclose(g, m, rtol=1e-4, atol=1e-5)


def test_trains_its_own_variables():
    with tf.Graph().as_default():
        x = tf.random_normal([T, B, I], seed=3)
        y = DynamicRNN(H, tf.float32)(x)[0]
        loss = tf.reduce_mean(tf.square(y - 0.5))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
        names = sorted(v.op.name for v in tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(20):
                sess.run(train_op)
            assert sess.run(loss) < first
    assert names == ["dynamic_rnn/dynamicrnn/b", "dynamic_rnn/dynamicrnn/w"]


@pytest.mark.parametrize("kwargs", [{"cell_type": "GRU"}, {"use_peephole": True}, {"num_proj": 4},
                                    {"time_major": False}, {"keep_prob": 0.5}])
def test_unsupported_configurations_are_rejected(kwargs):
    with pytest.raises(ValueError, match="not supported"):
        DynamicRNN(H, tf.float32, **kwargs)


def test_seq_length_is_rejected_clearly():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="seq_length"):
            DynamicRNN(H, tf.float32)(tf.zeros([T, B, I]), seq_length=tf.constant([T] * B))


class _TanhCell:
    """A plain tanh RNN cell with its weights made up front (the Keras-backed v1 cells need tf_keras on
    TensorFlow >= 2.16), so an unrolled and a looped run share them."""

    output_size = state_size = H

    def __init__(self):
        self.kernel = tf.constant(np.random.RandomState(2).randn(I + H, H).astype(np.float32) * 0.5)

    def zero_state(self, batch_size, dtype):
        return tf.zeros([batch_size, H], dtype)

    def __call__(self, inputs, state, scope=None):
        output = tf.tanh(tf.matmul(tf.concat([inputs, state], axis=1), self.kernel))
        return output, output


def test_npu_dynamic_rnn_unrolls_to_the_same_values_as_dynamic_rnn():
    """npu_rnn.npu_dynamic_rnn: time-major inputs through an unrolled static_rnn (no while loop), equal to
    tf.nn.dynamic_rnn over the same cell, with sequence lengths."""
    from npu_bridge.estimator.npu import npu_rnn

    x_value = np.random.RandomState(1).randn(T, B, I).astype(np.float32)
    with tf.Graph().as_default() as graph:
        x = tf.constant(x_value)
        lengths = tf.constant([4, 2, 3])
        cell = _TanhCell()
        unrolled, unrolled_state = npu_rnn.npu_dynamic_rnn(cell, x, dtype=tf.float32, sequence_length=lengths,
                                                           scope="unrolled")
        assert not [op for op in graph.get_operations() if op.type == "Enter"]
        looped, looped_state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, sequence_length=lengths,
                                                 time_major=True, scope="looped")
        with tf.Session() as sess:
            got, want = sess.run([(unrolled, unrolled_state), (looped, looped_state)])
    assert got[0].shape == (T, B, H)
    for mine, theirs in zip(got, want):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def _rnn_run(tmp_path, precision_mode, mixlist=None):
    """(y, weight gradient, report) of a DynamicRNN in an emulated session under `precision_mode`."""
    import json

    from npu_bridge.runtime import activate, last_report
    from tests.npu_test_support import npu_config

    activate()
    parameters = {"use_off_line": True, "precision_mode": precision_mode}
    if mixlist is not None:
        path = tmp_path / "mixlist.json"
        path.write_text(json.dumps(mixlist))
        parameters["modify_mixlist"] = str(path)
    rng = np.random.RandomState(4)
    with tf.Graph().as_default():
        x = tf.constant(rng.randn(T, B, I).astype(np.float32))
        w = tf.Variable(rng.randn(I + H, 4 * H).astype(np.float32) * 0.3)
        y = DynamicRNN(H, tf.float32)(x, weight=w, bias=tf.zeros([4 * H]))[0]
        grad, = tf.gradients(tf.reduce_sum(y ** 2), [w])
        with tf.Session(config=npu_config(**parameters)) as sess:
            sess.run(tf.global_variables_initializer())
            y_value, grad_value = sess.run([y, grad])
            return y_value, grad_value, last_report(sess)


def _row(report, tf_type):
    row, = [record for record in report.records if record.tf_type == tf_type]
    return row


def test_dynamic_rnn_is_the_white_list_dynamic_rnn_op_under_mixed_precision(tmp_path):
    """The NPU's DynamicRNN is on the white list (precision_reduce true): it computes in float16. Its gradient is
    in no list (gray). Values move by float16 rounding only."""
    y, grad, report = _rnn_run(tmp_path, "allow_mix_precision")
    forward, backward = _row(report, "BlockLSTM"), _row(report, "BlockLSTMGrad")
    assert (forward.ir_type, forward.list, forward.decision) == ("DynamicRNN", "white", "float16")
    assert backward.list == "gray"
    y32, grad32, _ = _rnn_run(tmp_path, "must_keep_origin_dtype")
    assert not np.array_equal(y, y32)
    np.testing.assert_allclose(y, y32, atol=5e-3)
    np.testing.assert_allclose(grad, grad32, rtol=2e-2, atol=2e-2)


def test_a_mixlist_can_keep_dynamic_rnn_in_float32(tmp_path):
    _, _, report = _rnn_run(tmp_path, "allow_mix_precision", mixlist={"black-list": {"to-add": ["DynamicRNN"]}})
    forward = _row(report, "BlockLSTM")
    assert (forward.list, forward.decision) == ("black", "float32")
