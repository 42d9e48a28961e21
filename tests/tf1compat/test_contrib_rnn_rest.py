"""The rest of tf.contrib's RNN family, built as the ported GNMT, DeepSpeech and Attention-OCR scripts build it:
contrib.rnn.ops.gen_lstm_ops (the fused LSTM kernels), contrib.recurrent's functional RNNs, contrib.cudnn_rnn's
layers and cells on a CPU, and legacy_seq2seq's attention decoders, each checked against a numpy reference of TF
1.15's documented arithmetic and against TF 1.15's variable names."""
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge import tf1compat

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def installed():
    tf1compat.install()
    with tf.Graph().as_default() as graph:
        yield graph


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _run(fetches, feed=None):
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        return sess.run(fetches, feed)


def _numpy_lstm(x, kernel, bias, forget_bias, h=None, c=None):
    """Time-major LSTM with TF's fused gate order [i, ci, f, o]: per-step h and the final (c, h)."""
    units = kernel.shape[1] // 4
    h = np.zeros((x.shape[1], units), np.float32) if h is None else h
    c = np.zeros_like(h) if c is None else c
    outputs = []
    for step in x:
        i, ci, f, o = np.split(np.concatenate([step, h], 1) @ kernel + bias, 4, axis=1)
        c = _sigmoid(i) * np.tanh(ci) + c * _sigmoid(f + forget_bias)
        h = np.tanh(c) * _sigmoid(o)
        outputs.append(h)
    return np.stack(outputs), c, h


def test_gen_lstm_ops_block_lstm_is_the_fused_kernel_with_tf115s_arguments_and_gradient():
    from tensorflow.contrib.rnn.ops import gen_lstm_ops

    rng = np.random.RandomState(0)
    x = rng.randn(3, 2, 4).astype(np.float32)
    kernel = v1.get_variable("kernel", initializer=rng.randn(9, 20).astype(np.float32) * 0.5)
    bias = v1.get_variable("bias", initializer=rng.randn(20).astype(np.float32) * 0.1)
    zeros_state, no_peephole = tf.zeros([2, 5]), tf.zeros([5])
    # the call a ported LSTMBlockFusedCell makes: positional ops arguments, a negative cell_clip for no clipping
    _, cs, _, _, _, _, h = gen_lstm_ops.block_lstm(
        tf.constant(3, tf.int64), x, zeros_state, zeros_state, kernel, no_peephole, no_peephole, no_peephole, bias,
        forget_bias=1.0, cell_clip=-1, use_peephole=False)
    step = gen_lstm_ops.lstm_block_cell(x[0], zeros_state, zeros_state, kernel, no_peephole, no_peephole,
                                        no_peephole, bias, cell_clip=-1)
    gradient = tf.gradients(tf.reduce_sum(h), kernel)[0]
    assert h.op.type == "BlockLSTM" and gradient is not None
    got_cs, got_h, got_step_h, kernel_value, bias_value, got_gradient = _run(
        [cs, h, step.h, kernel, bias, gradient])
    outputs, final_c, _ = _numpy_lstm(x, kernel_value, bias_value, forget_bias=1.0)
    np.testing.assert_allclose(got_h, outputs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_cs[-1], final_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_step_h, outputs[0], rtol=1e-5, atol=1e-6)
    assert np.abs(got_gradient).sum() > 0


def _numpy_tanh_rnn(x, kernel, bias, lengths):
    """Batch-major BasicRNNCell over each sequence's length: outputs zero past it, the state frozen at it."""
    batch, time, _ = x.shape
    h = np.zeros((batch, kernel.shape[1]), np.float32)
    outputs = np.zeros((batch, time, kernel.shape[1]), np.float32)
    for t in range(time):
        new_h = np.tanh(np.concatenate([x[:, t], h], 1) @ kernel + bias)
        running = (t < lengths)[:, None]
        h = np.where(running, new_h, h)
        outputs[:, t] = np.where(running, new_h, 0)
    return outputs, h


def _reverse_within(x, lengths):
    reversed_x = x.copy()
    for row, length in enumerate(lengths):
        reversed_x[row, :length] = x[row, :length][::-1]
    return reversed_x


def test_functional_rnn_is_dynamic_rnn_with_its_scope_lengths_and_reverse():
    rng = np.random.RandomState(1)
    x = rng.randn(2, 4, 3).astype(np.float32)
    lengths = np.array([4, 2], np.int32)
    inputs = v1.placeholder(tf.float32, [2, 4, 3])
    cell = v1.contrib.rnn.BasicRNNCell(5)
    # GNMT's call: batch-major inputs, int32 lengths, use_tpu=False
    outputs, state = v1.contrib.recurrent.functional_rnn(cell, inputs, sequence_length=lengths, dtype=tf.float32,
                                                         time_major=False, use_tpu=False)
    reversed_outputs, _ = v1.contrib.recurrent.functional_rnn(cell, inputs, sequence_length=lengths,
                                                              dtype=tf.float32, reverse=True, scope="rnn")
    assert [v.op.name for v in v1.trainable_variables()] == ["rnn/basic_rnn_cell/kernel", "rnn/basic_rnn_cell/bias"]
    got, got_state, got_reversed, kernel, bias = _run(
        [outputs, state, reversed_outputs] + v1.trainable_variables(), {inputs: x})
    want, want_state = _numpy_tanh_rnn(x, kernel, bias, lengths)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-5, atol=1e-6)
    want_reversed, _ = _numpy_tanh_rnn(_reverse_within(x, lengths), kernel, bias, lengths)
    np.testing.assert_allclose(got_reversed, _reverse_within(want_reversed, lengths), rtol=1e-5, atol=1e-6)


def test_bidirectional_functional_rnn_reads_each_sequence_backwards_within_its_length():
    rng = np.random.RandomState(2)
    x = rng.randn(2, 4, 3).astype(np.float32)
    lengths = np.array([3, 4], np.int32)
    inputs = v1.placeholder(tf.float32, [2, 4, 3])
    (output_fw, output_bw), (state_fw, state_bw) = v1.contrib.recurrent.bidirectional_functional_rnn(
        v1.contrib.rnn.BasicRNNCell(5), v1.contrib.rnn.BasicRNNCell(5), inputs, dtype=tf.float32,
        sequence_length=lengths, time_major=False, use_tpu=False)
    assert [v.op.name for v in v1.trainable_variables()] == [
        "bidirectional_rnn/fw/basic_rnn_cell/kernel", "bidirectional_rnn/fw/basic_rnn_cell/bias",
        "bidirectional_rnn/bw/basic_rnn_cell/kernel", "bidirectional_rnn/bw/basic_rnn_cell/bias"]
    got_fw, got_bw, got_state_bw, kernel_fw, bias_fw, kernel_bw, bias_bw = _run(
        [output_fw, output_bw, state_bw] + v1.trainable_variables(), {inputs: x})
    np.testing.assert_allclose(got_fw, _numpy_tanh_rnn(x, kernel_fw, bias_fw, lengths)[0], rtol=1e-5, atol=1e-6)
    want_bw, want_state_bw = _numpy_tanh_rnn(_reverse_within(x, lengths), kernel_bw, bias_bw, lengths)
    np.testing.assert_allclose(got_bw, _reverse_within(want_bw, lengths), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state_bw, want_state_bw, rtol=1e-5, atol=1e-6)
