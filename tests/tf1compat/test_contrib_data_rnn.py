"""tf.contrib.data and tf.contrib.rnn as ported scripts use them, against TF 1.15's behaviour: what a pipeline
yields, cell variable names, and the contrib-only cells' arithmetic."""
import numpy as np
import pytest
import tensorflow as tf


v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("tf1_graph")


def _all(dataset):
    next_element = v1.data.make_one_shot_iterator(dataset).get_next()
    values = []
    with v1.Session() as sess:
        try:
            while True:
                values.append(sess.run(next_element))
        except tf.errors.OutOfRangeError:
            return values


def test_map_and_batch_and_parallel_interleave_yield_tf115s_batches():
    data = v1.contrib.data
    dataset = tf.data.Dataset.range(3).apply(data.parallel_interleave(
        lambda i: tf.data.Dataset.range(i * 10, i * 10 + 2), cycle_length=3))
    dataset = dataset.apply(data.map_and_batch(lambda x: x * 2, batch_size=4, drop_remainder=True,
                                               num_parallel_calls=data.AUTOTUNE))
    # deterministic interleave (sloppy=False): one element from each input in turn
    assert [list(batch) for batch in _all(dataset)] == [[0, 20, 40, 2]]
    assert data.AUTOTUNE == -1


def test_shuffle_and_repeat_and_batch_and_drop_remainder():
    from tensorflow.contrib.data import batch_and_drop_remainder, shuffle_and_repeat

    epochs = _all(tf.data.Dataset.range(5).apply(shuffle_and_repeat(5, count=2, seed=1)))
    assert sorted(epochs) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4] and epochs != sorted(epochs)
    batches = _all(tf.data.Dataset.range(10).apply(batch_and_drop_remainder(3)))
    assert [batch.tolist() for batch in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_sliding_window_batch():
    dataset = tf.data.Dataset.range(5).apply(v1.contrib.data.sliding_window_batch(3, stride=1))
    assert [list(window) for window in _all(dataset)] == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]


def test_contrib_rnn_cells_are_tf_cells_with_tf115_variable_names():
    rnn = v1.contrib.rnn
    inputs = v1.placeholder(tf.float32, [2, 4, 3])
    cell = rnn.MultiRNNCell([rnn.DropoutWrapper(rnn.LSTMCell(5), output_keep_prob=1.0), rnn.GRUCell(5)])
    outputs, state = v1.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
    assert isinstance(state[0], rnn.LSTMStateTuple)
    assert [v.op.name for v in v1.trainable_variables()] == [
        "rnn/multi_rnn_cell/cell_0/lstm_cell/kernel", "rnn/multi_rnn_cell/cell_0/lstm_cell/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel", "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel", "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias"]
    assert outputs.shape.as_list() == [2, 4, 5]


def test_lstm_block_cell_computes_what_tf115s_fused_kernel_did():
    inputs = v1.placeholder(tf.float32, [2, 3, 4])
    outputs, _ = v1.nn.dynamic_rnn(v1.contrib.rnn.LSTMBlockCell(3), inputs, dtype=tf.float32)
    assert [v.op.name for v in v1.trainable_variables()] == ["rnn/lstm_cell/kernel", "rnn/lstm_cell/bias"]
    x = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        got, kernel, bias = sess.run([outputs] + v1.trainable_variables(), {inputs: x})
    # LSTMBlockCell: [i, ci, f, o] = [x, h] W + b; c = sigmoid(i) tanh(ci) + c sigmoid(f + 1); h = tanh(c) sigmoid(o)
    sigmoid = lambda z: 1 / (1 + np.exp(-z))
    c = h = np.zeros((2, 3), np.float32)
    for t in range(3):
        i, ci, f, o = np.split(np.concatenate([x[:, t], h], 1) @ kernel + bias, 4, axis=1)
        c = sigmoid(i) * np.tanh(ci) + c * sigmoid(f + 1.0)
        h = np.tanh(c) * sigmoid(o)
        np.testing.assert_allclose(got[:, t], h, rtol=1e-5, atol=1e-6)


def test_layer_norm_basic_lstm_cell_variables_and_shapes():
    inputs = v1.placeholder(tf.float32, [2, 3, 4])
    outputs, state = v1.nn.dynamic_rnn(v1.contrib.rnn.LayerNormBasicLSTMCell(6), inputs, dtype=tf.float32)
    names = [v.op.name for v in v1.trainable_variables()]
    prefix = "rnn/layer_norm_basic_lstm_cell/"     # an RNNCell is a layer: its scope is the snake-cased class
    assert names == [prefix + "kernel"] + [f"{prefix}{gate}/{p}" for gate in ("input", "transform", "forget",
                                                                               "output", "state")
                                            for p in ("gamma", "beta")]
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        h, c = sess.run([outputs, state.c], {inputs: np.ones((2, 3, 4), np.float32)})
    assert h.shape == (2, 3, 6) and np.isfinite(h).all()
    # the new cell state is layer-normalised (gain 1, shift 0): zero mean over the units
    np.testing.assert_allclose(c.mean(axis=1), 0, atol=1e-5)


def test_stack_bidirectional_dynamic_rnn_scopes_and_outputs():
    rnn = v1.contrib.rnn
    inputs = v1.placeholder(tf.float32, [2, 5, 3])
    outputs, states_fw, states_bw = rnn.stack_bidirectional_dynamic_rnn(
        [rnn.GRUCell(4), rnn.GRUCell(4)], [rnn.GRUCell(4), rnn.GRUCell(4)], inputs, dtype=tf.float32)
    assert outputs.shape.as_list() == [2, 5, 8] and len(states_fw) == len(states_bw) == 2
    names = {v.op.name.rsplit("/gru_cell", 1)[0] for v in v1.trainable_variables()}
    assert names == {f"stack_bidirectional_rnn/cell_{i}/bidirectional_rnn/{d}" for i in (0, 1) for d in ("fw", "bw")}
