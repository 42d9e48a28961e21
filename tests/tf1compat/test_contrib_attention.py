"""contrib.seq2seq's attention against TF 1.15's documented arithmetic: one AttentionWrapper step of Bahdanau
(plain and normalized) and Luong (plain and scaled) attention against numpy, memory_sequence_length masking the
padded steps, TF 1.15's variable names, the alignment history under dynamic_rnn, and a short NMT-style training run
(dynamic_rnn encoder, BasicDecoder over the attention cell, sequence_loss) whose loss decreases."""
import numpy as np
import pytest
import tensorflow as tf
from tf_keras.src.legacy_tf_layers import core as legacy_core

v1 = tf.compat.v1

pytestmark = pytest.mark.usefixtures("tf1_graph")

BATCH, MAX_TIME, DEPTH, UNITS, INPUT = 2, 4, 5, 3, 2
LENGTHS = np.array([4, 2], np.int32)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _memory():
    return np.random.RandomState(0).randn(BATCH, MAX_TIME, DEPTH).astype(np.float32)


def _one_step(mechanism_class, **options):
    """One wrapper step over a BasicRNNCell(UNITS) with an attention layer; returns the fetched values by name."""
    seq2seq = v1.contrib.seq2seq
    memory = tf.constant(_memory())
    mechanism = mechanism_class(UNITS, memory, memory_sequence_length=LENGTHS, **options)
    cell = seq2seq.AttentionWrapper(v1.contrib.rnn.BasicRNNCell(UNITS), mechanism, attention_layer_size=4)
    inputs = tf.constant(np.random.RandomState(1).randn(BATCH, INPUT).astype(np.float32))
    output, state = cell(inputs, cell.zero_state(BATCH, tf.float32))
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        variables = {v.op.name: v for v in v1.global_variables()}
        fetched = session.run({"output": output, "alignments": state.alignments, "attention": state.attention,
                               "cell_state": state.cell_state, "time": state.time, "inputs": inputs,
                               "variables": variables})
    return fetched


def _numpy_step(fetched, score_fn):
    """TF 1.15's wrapper step: cell on [inputs, zero attention], masked softmax of the score, context, then
    attention_layer([cell_output, context])."""
    w = fetched["variables"]
    memory = _memory() * (np.arange(MAX_TIME)[None, :] < LENGTHS[:, None])[..., None]
    keys = memory @ w["memory_layer/kernel"]
    cell_in = np.concatenate([fetched["inputs"], np.zeros([BATCH, 4], np.float32)], 1)
    cell_output = np.tanh(np.concatenate([cell_in, np.zeros([BATCH, UNITS])], 1)
                          @ w["attention_wrapper/basic_rnn_cell/kernel"] + w["attention_wrapper/basic_rnn_cell/bias"])
    score = score_fn(cell_output, keys, w)
    score = np.where(np.arange(MAX_TIME)[None, :] < LENGTHS[:, None], score, -np.inf)
    alignments = _softmax(score)
    context = np.einsum("bt,btd->bd", alignments, memory)
    attention = np.concatenate([cell_output, context], 1) @ w["attention_wrapper/attention_layer/kernel"]
    return cell_output, alignments, attention


def _bahdanau_score(normalize):
    def score(query, keys, w):
        prefix = "attention_wrapper/bahdanau_attention/"
        processed = (query @ w[prefix + "query_layer/kernel"])[:, None, :]
        v = w[prefix + "attention_v"]
        if not normalize:
            return np.sum(v * np.tanh(keys + processed), 2)
        v = w[prefix + "attention_g"] * v / np.sqrt(np.sum(v * v))
        return np.sum(v * np.tanh(keys + processed + w[prefix + "attention_b"]), 2)
    return score


def _luong_score(scale):
    def score(query, keys, w):
        raw = np.einsum("bu,btu->bt", query, keys)
        return raw * w["attention_wrapper/luong_attention/attention_g"] if scale else raw
    return score


@pytest.mark.parametrize("normalize", [False, True])
def test_one_bahdanau_step_matches_numpy(normalize):
    fetched = _one_step(v1.contrib.seq2seq.BahdanauAttention, normalize=normalize)
    cell_output, alignments, attention = _numpy_step(fetched, _bahdanau_score(normalize))
    np.testing.assert_allclose(fetched["alignments"], alignments, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fetched["attention"], attention, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fetched["output"], attention, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fetched["cell_state"], cell_output, rtol=1e-5, atol=1e-6)
    assert fetched["time"] == 1


@pytest.mark.parametrize("scale", [False, True])
def test_one_luong_step_matches_numpy(scale):
    fetched = _one_step(v1.contrib.seq2seq.LuongAttention, scale=scale)
    if scale:
        assert fetched["variables"]["attention_wrapper/luong_attention/attention_g"] == 1.0
    _, alignments, attention = _numpy_step(fetched, _luong_score(scale))
    np.testing.assert_allclose(fetched["alignments"], alignments, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fetched["attention"], attention, rtol=1e-5, atol=1e-6)


def test_memory_past_the_sequence_length_gets_no_attention():
    fetched = _one_step(v1.contrib.seq2seq.LuongAttention)
    assert np.all(fetched["alignments"][1, 2:] == 0)
    assert np.all(fetched["alignments"][1, :2] > 0)
    np.testing.assert_allclose(fetched["alignments"].sum(1), 1, rtol=1e-6)


def test_variable_names_are_tf_1_15s():
    _one_step(v1.contrib.seq2seq.BahdanauAttention, normalize=True)
    names = sorted(v.op.name for v in v1.global_variables())
    assert names == ["attention_wrapper/attention_layer/kernel",
                     "attention_wrapper/bahdanau_attention/attention_b",
                     "attention_wrapper/bahdanau_attention/attention_g",
                     "attention_wrapper/bahdanau_attention/attention_v",
                     "attention_wrapper/bahdanau_attention/query_layer/kernel",
                     "attention_wrapper/basic_rnn_cell/bias",
                     "attention_wrapper/basic_rnn_cell/kernel",
                     "memory_layer/kernel"]


def test_dynamic_rnn_keeps_the_alignment_history_and_outputs_the_cell_output_when_asked():
    seq2seq = v1.contrib.seq2seq
    mechanism = seq2seq.LuongAttention(UNITS, tf.constant(_memory()), memory_sequence_length=LENGTHS)
    cell = seq2seq.AttentionWrapper(v1.contrib.rnn.GRUCell(UNITS), mechanism, alignment_history=True,
                                    output_attention=False)
    assert cell.output_size == UNITS and cell.state_size.attention == DEPTH
    inputs = tf.constant(np.random.RandomState(3).randn(BATCH, 3, INPUT).astype(np.float32))
    outputs, state = v1.nn.dynamic_rnn(cell, inputs, initial_state=cell.zero_state(BATCH, tf.float32),
                                     dtype=tf.float32)
    history = state.alignment_history.stack()
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        outputs, cell_state, history, alignments = session.run([outputs, state.cell_state, history,
                                                                state.alignments])
    assert outputs.shape == (BATCH, 3, UNITS) and history.shape == (3, BATCH, MAX_TIME)
    np.testing.assert_allclose(outputs[:, -1], cell_state, rtol=1e-6)
    np.testing.assert_allclose(history[-1], alignments, rtol=1e-6)
    assert np.all(history[:, 1, 2:] == 0)


def test_clone_replaces_the_cell_state_and_bad_arguments_say_what_is_wrong():
    seq2seq = v1.contrib.seq2seq
    mechanism = seq2seq.BahdanauAttention(UNITS, tf.constant(_memory()))
    cell = seq2seq.AttentionWrapper(v1.contrib.rnn.GRUCell(UNITS), mechanism, attention_layer_size=4)
    encoder_state = tf.ones([BATCH, UNITS])
    state = cell.zero_state(BATCH, tf.float32).clone(cell_state=encoder_state)
    assert state.cell_state is encoder_state and state.attention.shape.as_list() == [BATCH, 4]
    with pytest.raises(TypeError, match="AttentionWrapperState"):
        cell(tf.zeros([BATCH, INPUT]), encoder_state)
    with pytest.raises(TypeError, match="attention_mechanism must be an AttentionMechanism"):
        seq2seq.AttentionWrapper(v1.contrib.rnn.GRUCell(UNITS), "bahdanau")
    with pytest.raises(ValueError, match="incompatible or unknown inner dimensions"):
        luong = seq2seq.LuongAttention(UNITS + 1, tf.constant(_memory()))
        seq2seq.AttentionWrapper(v1.contrib.rnn.GRUCell(UNITS), luong)(
            tf.zeros([BATCH, INPUT]), seq2seq.AttentionWrapper(v1.contrib.rnn.GRUCell(UNITS), luong).zero_state(
                BATCH, tf.float32))


def test_an_nmt_style_model_trains():
    """Encoder dynamic_rnn, Bahdanau attention over its outputs, BasicDecoder + TrainingHelper, sequence_loss:
    Adam lowers the loss on a fixed copy task."""
    seq2seq = v1.contrib.seq2seq
    rng = np.random.RandomState(4)
    vocab, steps = 6, 4
    tokens = tf.constant(rng.randint(1, vocab, size=(8, steps)).astype(np.int32))
    lengths = np.full([8], steps, np.int32)
    embedding = v1.get_variable("embedding", [vocab, 8])
    source = tf.nn.embedding_lookup(embedding, tokens)
    with v1.variable_scope("encoder"):
        memory, encoder_state = v1.nn.dynamic_rnn(v1.contrib.rnn.GRUCell(8), source, sequence_length=lengths,
                                                  dtype=tf.float32)
    with v1.variable_scope("decoder"):
        mechanism = seq2seq.BahdanauAttention(8, memory, memory_sequence_length=lengths)
        cell = seq2seq.AttentionWrapper(v1.contrib.rnn.GRUCell(8), mechanism, attention_layer_size=8)
        initial = cell.zero_state(8, tf.float32).clone(cell_state=encoder_state)
        decoder_inputs = tf.nn.embedding_lookup(embedding, tf.pad(tokens[:, :-1], [[0, 0], [1, 0]]))
        helper = seq2seq.TrainingHelper(decoder_inputs, lengths)
        projection = legacy_core.Dense(vocab, name="output_projection")
        decoder = seq2seq.BasicDecoder(cell, helper, initial, output_layer=projection)
        outputs, _, _ = seq2seq.dynamic_decode(decoder)
    loss = seq2seq.sequence_loss(outputs.rnn_output, tokens, tf.ones([8, steps]))
    train = v1.train.AdamOptimizer(0.05).minimize(loss)
    names = {v.op.name for v in v1.trainable_variables()}
    assert {"decoder/memory_layer/kernel", "decoder/decoder/attention_wrapper/bahdanau_attention/attention_v",
            "decoder/decoder/attention_wrapper/attention_layer/kernel"} <= names
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        first = session.run(loss)
        for _ in range(30):
            session.run(train)
        last = session.run(loss)
    assert last < 0.5 * first
