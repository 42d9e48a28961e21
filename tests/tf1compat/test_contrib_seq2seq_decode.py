"""contrib.seq2seq's decoder framework against TF 1.15's documented behaviour: a GRU BasicDecoder under
TrainingHelper against a numpy GRU (outputs, sample ids, final state and lengths, impute_finished, variable
names), GreedyEmbeddingHelper's end token and maximum_iterations on a cell whose next token is known, and
gather_tree against a numpy trace of the beams."""
import numpy as np
import pytest
import tensorflow as tf
from tf_keras.src.legacy_tf_layers import core as legacy_core


v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("tf1_graph")


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _numpy_gru_decode(inputs, lengths, h0, weights, impute_finished):
    """TF 1.15's GRUCell, Dense projection, argmax ids; zero outputs / frozen state past a length if imputing."""
    gate_kernel, gate_bias, cand_kernel, cand_bias, dense_kernel, dense_bias = weights
    units = h0.shape[1]
    state, outputs, ids = h0.copy(), [], []
    for t in range(inputs.shape[1]):
        x = inputs[:, t]
        gates = _sigmoid(np.concatenate([x, state], 1) @ gate_kernel + gate_bias)
        reset, update = gates[:, :units], gates[:, units:]
        candidate = np.tanh(np.concatenate([x, reset * state], 1) @ cand_kernel + cand_bias)
        new_state = update * state + (1 - update) * candidate
        logits = new_state @ dense_kernel + dense_bias
        done = (t >= lengths)[:, None]
        if impute_finished:
            logits, new_state = np.where(done, 0, logits), np.where(done, state, new_state)
        outputs.append(logits)
        ids.append(np.argmax(logits, -1))
        state = new_state
    return np.stack(outputs, 1), np.stack(ids, 1), state


@pytest.mark.parametrize("impute_finished", [False, True])
def test_basic_decoder_with_training_helper_matches_a_numpy_gru(impute_finished):
    seq2seq = v1.contrib.seq2seq
    rng = np.random.RandomState(0)
    inputs = rng.randn(2, 3, 4).astype(np.float32)
    lengths = np.array([3, 1], np.int32)
    h0 = rng.randn(2, 5).astype(np.float32)
    cell = v1.contrib.rnn.GRUCell(5)
    helper = seq2seq.TrainingHelper(tf.constant(inputs), tf.constant(lengths))
    decoder = seq2seq.BasicDecoder(cell, helper, tf.constant(h0), output_layer=legacy_core.Dense(6))
    outputs, state, final_lengths = seq2seq.dynamic_decode(decoder, impute_finished=impute_finished)

    assert isinstance(outputs, seq2seq.BasicDecoderOutput)
    assert outputs.rnn_output.shape.as_list() == [2, None, 6] and outputs.sample_id.dtype == tf.int32
    names = sorted(v.op.name for v in v1.global_variables())
    assert names == ["decoder/dense/bias", "decoder/dense/kernel", "decoder/gru_cell/candidate/bias",
                     "decoder/gru_cell/candidate/kernel", "decoder/gru_cell/gates/bias",
                     "decoder/gru_cell/gates/kernel"]
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        got_out, got_ids, got_state, got_lengths = sess.run(
            [outputs.rnn_output, outputs.sample_id, state, final_lengths])
        by_name = dict(zip(names, sess.run(sorted(v1.global_variables(), key=lambda v: v.op.name))))
    weights = [by_name[f"decoder/{n}"] for n in ("gru_cell/gates/kernel", "gru_cell/gates/bias",
                                                  "gru_cell/candidate/kernel", "gru_cell/candidate/bias",
                                                  "dense/kernel", "dense/bias")]
    want_out, want_ids, want_state = _numpy_gru_decode(inputs, lengths, h0, weights, impute_finished)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_ids, want_ids)
    np.testing.assert_array_equal(got_lengths, lengths)
    if impute_finished:
        np.testing.assert_allclose(got_state, want_state, rtol=1e-5, atol=1e-6)
        assert not got_out[1, 1:].any()


class _NextTokenCell:
    """Logits = one-hot input @ a shift matrix: after token i comes token i + 1 (mod 4), so greedy decoding is
    known in advance. The state counts the steps. (A cell is any callable with an output_size, as in TF 1.15.)"""

    output_size = 4

    def __call__(self, inputs, state):
        shift = tf.constant(np.roll(np.eye(4, dtype=np.float32), 1, axis=1))
        return inputs @ shift, state + 1


@pytest.mark.parametrize("maximum_iterations, impute_finished, want_ids, want_lengths", [
    (None, False, [[1, 2, 3], [3, 0, 1]], [3, 1]),
    (2, False, [[1, 2], [3, 0]], [2, 1]),
    (None, True, [[1, 2, 3], [3, 0, 0]], [3, 1]),
])
def test_greedy_embedding_helper_stops_at_the_end_token_or_maximum_iterations(
        maximum_iterations, impute_finished, want_ids, want_lengths):
    seq2seq = v1.contrib.seq2seq
    helper = seq2seq.GreedyEmbeddingHelper(tf.eye(4), start_tokens=tf.constant([0, 2]), end_token=3)
    decoder = seq2seq.BasicDecoder(_NextTokenCell(), helper, tf.zeros([2, 1]))
    outputs, state, lengths = seq2seq.dynamic_decode(
        decoder, maximum_iterations=maximum_iterations, impute_finished=impute_finished)
    with v1.Session() as sess:
        got_ids, got_state, got_lengths, got_time_major = sess.run(
            [outputs.sample_id, state, lengths, seq2seq.dynamic_decode(
                seq2seq.BasicDecoder(_NextTokenCell(), helper, tf.zeros([2, 1])), output_time_major=True,
                maximum_iterations=maximum_iterations)[0].sample_id])
    np.testing.assert_array_equal(got_ids, want_ids)
    np.testing.assert_array_equal(got_lengths, want_lengths)
    assert got_time_major.shape == tuple(reversed(np.shape(want_ids)))
    steps = len(want_ids[0])
    np.testing.assert_array_equal(got_state[:, 0], want_lengths if impute_finished else [steps, steps])


def _numpy_gather_tree(step_ids, parent_ids, lengths, end_token):
    _, batch, beam = step_ids.shape
    beams = np.full_like(step_ids, end_token)
    for b in range(batch):
        for k in range(beam):
            last = lengths[b] - 1
            if last < 0:
                continue
            beams[last, b, k] = step_ids[last, b, k]
            parent = parent_ids[last, b, k]
            for t in range(last - 1, -1, -1):
                beams[t, b, k] = step_ids[t, b, parent]
                parent = parent_ids[t, b, parent]
            ended = np.cumsum(beams[:, b, k] == end_token) - (beams[:, b, k] == end_token) > 0
            beams[ended, b, k] = end_token
    return beams


def test_gather_tree_traces_beams_back_through_their_parents():
    from tensorflow.contrib.seq2seq.python.ops import beam_search_ops

    rng = np.random.RandomState(1)
    step_ids = rng.randint(0, 6, size=(5, 3, 4)).astype(np.int32)
    parent_ids = rng.randint(0, 4, size=(5, 3, 4)).astype(np.int32)
    lengths = np.array([5, 3, 0], np.int32)
    beams = beam_search_ops.gather_tree(step_ids, parent_ids, lengths, end_token=5)
    with v1.Session() as sess:
        got = sess.run(beams)
    np.testing.assert_array_equal(got, _numpy_gather_tree(step_ids, parent_ids, lengths, 5))
    assert got.dtype == np.int32 and got.shape == (5, 3, 4)


def test_module_paths_and_clear_errors():
    from tensorflow.contrib.seq2seq.python.ops import decoder
    from tensorflow.contrib.seq2seq.python.ops import helper as helper_py
    from tensorflow.contrib.seq2seq.python.ops.helper import Helper, TrainingHelper

    assert decoder.dynamic_decode is v1.contrib.seq2seq.dynamic_decode
    assert issubclass(TrainingHelper, Helper) and helper_py.GreedyEmbeddingHelper is not None
    with pytest.raises(TypeError, match="Expected decoder to be type Decoder, but saw: str"):
        decoder.dynamic_decode("not a decoder")
    with pytest.raises(TypeError, match="helper must be a Helper, received: int"):
        v1.contrib.seq2seq.BasicDecoder(v1.contrib.rnn.GRUCell(2), 3, tf.zeros([1, 2]))
    with pytest.raises(ValueError, match="sequence_length to be a vector"):
        v1.contrib.seq2seq.TrainingHelper(tf.zeros([1, 2, 3]), tf.constant(2))


def test_the_decoder_module_keeps_tf_1_15s_transpose_batch_time():
    """NMT_ID0512's static_utils/helper.py calls decoder._transpose_batch_time on its [batch, time, depth] inputs."""
    from tensorflow.contrib.seq2seq.python.ops import decoder

    values = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    unknown = v1.placeholder(tf.float32, [None, None, 4])
    static = decoder._transpose_batch_time(tf.constant(values))
    dynamic = decoder._transpose_batch_time(unknown)
    assert static.shape.as_list() == [3, 2, 4] and dynamic.shape.as_list() == [None, None, 4]
    vector = tf.constant([1.0, 2.0])
    assert decoder._transpose_batch_time(vector) is vector
    with v1.Session() as sess:
        got_static, got_dynamic = sess.run([static, dynamic], {unknown: values})
    np.testing.assert_array_equal(got_static, values.transpose(1, 0, 2))
    np.testing.assert_array_equal(got_dynamic, values.transpose(1, 0, 2))


def test_the_attention_and_beam_search_module_paths_import_and_name_what_they_lack():
    """NMT_ID0512's beam search decoder imports attention_wrapper beside beam_search_ops: the module paths import,
    the names they held that npu_bridge has are the same objects, the rest raise the contrib error."""
    from tensorflow.contrib.seq2seq.python.ops import attention_wrapper, beam_search_decoder
    from tensorflow.contrib.seq2seq.python.ops.loss import sequence_loss

    assert beam_search_decoder.tile_batch is v1.contrib.seq2seq.tile_batch
    assert beam_search_decoder.gather_tree is v1.contrib.seq2seq.gather_tree
    assert sequence_loss is v1.contrib.seq2seq.sequence_loss
    assert attention_wrapper.AttentionWrapperState is v1.contrib.seq2seq.AttentionWrapperState
    with pytest.raises(ImportError, match=r"tf\.contrib\.seq2seq\.python\.ops\.attention_wrapper\."
                                          r"BahdanauMonotonicAttention is not provided.*tensorflow_addons\.seq2seq"):
        _ = attention_wrapper.BahdanauMonotonicAttention
    assert beam_search_decoder.BeamSearchDecoder is v1.contrib.seq2seq.BeamSearchDecoder
    with pytest.raises(ImportError, match=r"beam_search_decoder\.gather_tree_from_array is not provided"):
        _ = beam_search_decoder.gather_tree_from_array


def test_lstm_decode_keeps_the_state_tuple_and_freezes_each_sequence_at_its_length():
    seq2seq = v1.contrib.seq2seq
    inputs = tf.constant(np.random.RandomState(2).randn(2, 3, 4).astype(np.float32))
    lengths = np.array([2, 3], np.int32)
    cell = v1.contrib.rnn.LSTMCell(3)
    initial = cell.zero_state(2, tf.float32)
    decoder = seq2seq.BasicDecoder(cell, seq2seq.TrainingHelper(inputs, tf.constant(lengths)), initial)
    outputs, state, _ = seq2seq.dynamic_decode(decoder, impute_finished=True, scope="decoder")
    assert isinstance(state, v1.contrib.rnn.LSTMStateTuple)
    with v1.variable_scope("decoder", reuse=True):
        step_states, step_outputs, unrolled = [], [], initial
        for t in range(3):
            out, unrolled = cell(inputs[:, t], unrolled)
            step_outputs.append(out)
            step_states.append(unrolled)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        got_out, got_state, want_out, want_states = sess.run([outputs.rnn_output, state, step_outputs, step_states])
    for b, length in enumerate(lengths):
        np.testing.assert_allclose(got_out[b, :length], np.stack(want_out, 1)[b, :length], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_state.c[b], want_states[length - 1].c[b], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_state.h[b], want_states[length - 1].h[b], rtol=1e-5, atol=1e-6)
    assert not got_out[0, 2:].any()
