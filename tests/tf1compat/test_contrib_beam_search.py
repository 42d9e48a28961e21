"""contrib.seq2seq.BeamSearchDecoder under dynamic_decode against a brute-force numpy beam search on a tiny
deterministic cell and vocabulary: every step's scores, word and parent ids, the gathered beams, the final log
probabilities, lengths (end_token counted, not grown after), finished flags and the sequence lengths, with and
without TF 1.15's length penalty, an embedding matrix or function, and maximum_iterations; and over an
AttentionWrapper, the alignment history reordered along the final beams (reorder_tensor_arrays)."""
import numpy as np
import pytest
import tensorflow as tf
from tf_keras.src.legacy_tf_layers import core as legacy_core

v1 = tf.compat.v1

pytestmark = pytest.mark.usefixtures("tf1_graph")

BATCH, BEAM, VOCAB, UNITS, START, END = 2, 3, 5, 4, 0, 1
FLOAT32_MIN = float(np.finfo(np.float32).min)


def _weights(seed, end_bias=1.0):
    rng = np.random.RandomState(seed)
    embedding = rng.randn(VOCAB, 3).astype(np.float32)
    in_kernel = rng.randn(3, UNITS).astype(np.float32)
    rec_kernel = rng.randn(UNITS, UNITS).astype(np.float32)
    out_kernel = rng.randn(UNITS + 1, VOCAB).astype(np.float32) * 2
    out_kernel[UNITS], out_kernel[:, END] = 0, 0
    out_kernel[UNITS, END] = end_bias
    out_bias = np.zeros(VOCAB, np.float32)
    out_bias[END] = -3
    h0 = rng.randn(BATCH, UNITS).astype(np.float32)
    return embedding, in_kernel, rec_kernel, out_kernel, out_bias, h0


class _TinyCell:
    """A two-tensor state cell: h' = tanh(x U + h W), a step counter c' = c + 1; its output is [h', c'], so the
    output layer can make end_token likelier as the beams grow."""

    state_size = (UNITS, 1)
    output_size = UNITS + 1

    def __init__(self, in_kernel, rec_kernel):
        self._in_kernel, self._rec_kernel = tf.constant(in_kernel), tf.constant(rec_kernel)

    def __call__(self, inputs, state):
        h, c = state
        new_h = tf.tanh(inputs @ self._in_kernel + h @ self._rec_kernel)
        return tf.concat([new_h, c + 1], 1), (new_h, c + 1)


def _numpy_cell(x, h, c, in_kernel, rec_kernel):
    new_h = np.tanh(x @ in_kernel + h @ rec_kernel)
    return new_h, c + 1


def _log_softmax(logits):
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


def _numpy_beam_search(weights, penalty, max_steps):
    """Per batch entry, W hypotheses expanded over the whole vocabulary each step, ranked by log prob over TF 1.15's
    ((5 + length) / 6) ** penalty (length not counting the end_token just chosen), ties to the lower beam * V + id;
    a finished hypothesis only extends by end_token at no cost. As TF 1.15's, beams 1.. start finished at the
    lowest log probability, so the first step expands beam 0 only."""
    embedding, in_kernel, rec_kernel, out_kernel, out_bias, h0 = weights
    per_batch = []
    for b in range(BATCH):
        beams = [dict(log_prob=0.0 if k == 0 else FLOAT32_MIN, length=0, finished=k != 0, h=h0[b],
                      c=np.zeros(1, np.float32), ids=[]) for k in range(BEAM)]
        steps = []
        for _ in range(max_steps):
            scores, totals, states = [], [], []
            for beam in beams:
                last = beam["ids"][-1] if beam["ids"] else START
                h, c = _numpy_cell(embedding[last], beam["h"], beam["c"], in_kernel, rec_kernel)
                step_lp = _log_softmax(np.concatenate([h, c]) @ out_kernel + out_bias)
                if beam["finished"]:
                    step_lp = np.where(np.arange(VOCAB) == END, 0.0, FLOAT32_MIN)
                total = beam["log_prob"] + step_lp
                grows = (np.arange(VOCAB) != END) & (not beam["finished"])
                scores.append(total / ((5.0 + beam["length"] + grows) / 6.0) ** penalty)
                totals.append(total)
                states.append((h, c))
            flat = np.concatenate(scores)
            chosen = np.argsort(-flat, kind="stable")[:BEAM]
            new_beams, step = [], dict(scores=flat[chosen], words=chosen % VOCAB, parents=chosen // VOCAB)
            for parent, word in zip(chosen // VOCAB, chosen % VOCAB):
                old = beams[parent]
                new_beams.append(dict(log_prob=totals[parent][word], length=old["length"] + (not old["finished"]),
                                      finished=old["finished"] or word == END, h=states[parent][0],
                                      c=states[parent][1], ids=old["ids"] + [word]))
            step["was_finished"] = [beam["finished"] for beam in beams]
            beams = new_beams
            steps.append(step)
            if all(beam["finished"] for beam in beams):
                break
        per_batch.append((beams, steps))
    return per_batch


def _decode(weights, penalty, max_steps, embedding_as_fn=False):
    seq2seq = v1.contrib.seq2seq
    embedding, in_kernel, rec_kernel, out_kernel, out_bias, h0 = weights
    initial = seq2seq.tile_batch((tf.constant(h0), tf.zeros([BATCH, 1])), BEAM)
    embedding_arg = (lambda ids: tf.gather(tf.constant(embedding), ids)) if embedding_as_fn else tf.constant(embedding)
    output_layer = legacy_core.Dense(VOCAB, kernel_initializer=v1.constant_initializer(out_kernel),
                                     bias_initializer=v1.constant_initializer(out_bias))
    decoder = seq2seq.BeamSearchDecoder(
        cell=_TinyCell(in_kernel, rec_kernel), embedding=embedding_arg, start_tokens=tf.fill([BATCH], START),
        end_token=END, initial_state=initial, beam_width=BEAM, output_layer=output_layer,
        length_penalty_weight=penalty)
    outputs, state, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=max_steps)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        return sess.run((outputs, state.log_probs, state.lengths, state.finished, lengths))


@pytest.mark.parametrize("penalty, max_steps, embedding_as_fn, end_bias",
                         [(0.0, 12, False, 0.2), (0.8, 12, True, 0.2), (0.0, 3, False, 0.2), (0.0, 12, False, 1.0),
                          (0.8, 12, False, 1.0)])
def test_beam_search_decoder_matches_a_numpy_beam_search(penalty, max_steps, embedding_as_fn, end_bias):
    weights = _weights(3, end_bias)
    outputs, log_probs, lengths, finished, sequence_lengths = _decode(weights, penalty, max_steps, embedding_as_fn)
    expected = _numpy_beam_search(weights, penalty, max_steps)
    steps_run = max(len(steps) for _, steps in expected)
    step_outputs = outputs.beam_search_decoder_output
    assert outputs.predicted_ids.shape == (BATCH, steps_run, BEAM)
    for b, (beams, steps) in enumerate(expected):
        np.testing.assert_allclose(step_outputs.scores[b, :len(steps)], [s["scores"] for s in steps], rtol=1e-5)
        np.testing.assert_array_equal(step_outputs.predicted_ids[b, :len(steps)], [s["words"] for s in steps])
        np.testing.assert_array_equal(step_outputs.parent_ids[b, :len(steps)], [s["parents"] for s in steps])
        np.testing.assert_allclose(log_probs[b], [beam["log_prob"] for beam in beams], rtol=1e-5)
        np.testing.assert_array_equal(lengths[b], [beam["length"] for beam in beams])
        np.testing.assert_array_equal(finished[b], [beam["finished"] for beam in beams])
        full = np.full((steps_run, BEAM), END)
        full[:len(steps)] = np.array([beam["ids"] for beam in beams]).T
        np.testing.assert_array_equal(outputs.predicted_ids[b], full)
        ran = np.logical_not([s["was_finished"] for s in steps]) * np.arange(1, len(steps) + 1)[:, None]
        slot_lengths = ran.max(0)
        np.testing.assert_array_equal(sequence_lengths[b], slot_lengths)
    if end_bias >= 1:
        assert finished.all() and steps_run < max_steps
    elif max_steps == 3:
        assert steps_run == 3 and not finished.all()
    else:
        assert steps_run == max_steps and finished.any() and len(np.unique(lengths)) > 1


def test_length_penalty_changes_the_ranking():
    """The same weights rank beams differently with a length penalty (so the penalty case tests something)."""
    weights = _weights(3, end_bias=1.0)
    plain = _decode(weights, 0.0, 12)[0].predicted_ids
    penalised = _decode(weights, 0.8, 12)[0].predicted_ids
    assert plain.shape != penalised.shape or (plain != penalised).any()


def test_bad_arguments_raise_clear_errors():
    seq2seq = v1.contrib.seq2seq
    cell = _TinyCell(np.zeros((3, UNITS), np.float32), np.zeros((UNITS, UNITS), np.float32))
    state = (tf.zeros([BATCH * BEAM, UNITS]), tf.zeros([BATCH * BEAM, 1]))
    args = dict(cell=cell, embedding=tf.zeros([VOCAB, 3]), start_tokens=tf.fill([BATCH], START), end_token=END,
                initial_state=state, beam_width=BEAM)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        seq2seq.BeamSearchDecoder(**{**args, "end_token": [END]})
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        seq2seq.BeamSearchDecoder(**{**args, "start_tokens": START})
    with pytest.raises(ValueError, match=r"has 2 rows, expected batch_size \* beam_width = 2 \* 3.*tile_batch"):
        seq2seq.BeamSearchDecoder(**{**args, "initial_state": (tf.zeros([BATCH, UNITS]),) * 2})
    with pytest.raises(NotImplementedError, match="coverage_penalty_weight=0.0 only.*tensorflow_addons"):
        seq2seq.BeamSearchDecoder(**args, coverage_penalty_weight=0.2)


def test_module_paths_give_the_same_classes():
    from tensorflow.contrib.seq2seq.python.ops import beam_search_decoder

    for name in ("BeamSearchDecoder", "BeamSearchDecoderState", "BeamSearchDecoderOutput",
                 "FinalBeamSearchDecoderOutput"):
        assert getattr(beam_search_decoder, name) is getattr(v1.contrib.seq2seq, name)


def _numpy_ancestors(parent_ids, lengths):
    """[time, beam] parent ids of one batch entry -> each final beam's slot at every step (its own slot past its
    length), as TF 1.15 reorders alignment_history."""
    steps = parent_ids.shape[0]
    last = int(lengths.max())
    ancestors = np.tile(np.arange(BEAM), (steps, 1))
    for k in range(BEAM):
        slot = k
        for t in range(last - 1, -1, -1):
            ancestors[t, k] = slot
            slot = parent_ids[t, slot]
    return np.where(np.arange(steps)[:, None] < lengths[None, :], ancestors, np.arange(BEAM))


def test_attention_wrapper_alignment_history_is_reordered_along_the_final_beams():
    """NMT's inference graph: LuongAttention over tile_batch'ed memory, alignment_history kept; with
    reorder_tensor_arrays the history of final beam k at step t is that of the beam it descends from. The graph
    seed fixes the cell's and attention layer's weights: unseeded, some draws never reorder a beam."""
    v1.set_random_seed(0)
    seq2seq = v1.contrib.seq2seq
    rng = np.random.RandomState(0)
    memory = seq2seq.tile_batch(tf.constant(rng.randn(BATCH, 4, UNITS).astype(np.float32)), BEAM)
    mechanism = seq2seq.LuongAttention(UNITS, memory, memory_sequence_length=seq2seq.tile_batch(tf.constant([4, 2]), BEAM))
    cell = seq2seq.AttentionWrapper(v1.contrib.rnn.LSTMCell(UNITS), mechanism, attention_layer_size=UNITS,
                                    alignment_history=True)
    output_layer = legacy_core.Dense(VOCAB, kernel_initializer=v1.random_normal_initializer(stddev=2.0, seed=1))
    embedding = tf.constant(rng.randn(VOCAB, 3).astype(np.float32))
    results = []
    for reorder in (True, False):
        decoder = seq2seq.BeamSearchDecoder(
            cell, embedding, tf.fill([BATCH], START), END, cell.zero_state(BATCH * BEAM, tf.float32), BEAM,
            output_layer=output_layer, length_penalty_weight=0.6, reorder_tensor_arrays=reorder)
        outputs, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=6, scope=f"decode_{reorder}")
        history = state.cell_state.alignment_history
        results.append((outputs, state.lengths, history if reorder else history.stack()))
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        (outputs, lengths, reordered), (raw_outputs, _, raw) = sess.run(results)
    parent_ids = outputs.beam_search_decoder_output.parent_ids
    np.testing.assert_array_equal(parent_ids, raw_outputs.beam_search_decoder_output.parent_ids)
    assert reordered.shape == raw.shape == (parent_ids.shape[1], BATCH * BEAM, 4)
    moved = False
    for b in range(BATCH):
        ancestors = _numpy_ancestors(parent_ids[b], lengths[b])
        moved |= bool((ancestors != np.arange(BEAM)).any())
        for t in range(parent_ids.shape[1]):
            np.testing.assert_allclose(reordered[t, b * BEAM:(b + 1) * BEAM], raw[t, b * BEAM + ancestors[t]])
    assert moved
