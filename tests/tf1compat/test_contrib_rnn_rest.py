"""The rest of tf.contrib's RNN family, built as the ported GNMT, DeepSpeech and Attention-OCR scripts build it:
contrib.rnn.ops.gen_lstm_ops (the fused LSTM kernels), contrib.recurrent's functional RNNs, contrib.cudnn_rnn's
layers and cells on a CPU, and legacy_seq2seq's attention decoders, each checked against a numpy reference of TF
1.15's documented arithmetic and against TF 1.15's variable names."""
import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("tf1_graph")


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


def _by_name():
    """The graph's variables by name, to fetch in the same run as the outputs (a new run starts them afresh)."""
    return {v.op.name: v for v in v1.global_variables()}


def test_cudnn_lstm_runs_gnmts_stack_with_the_compatible_cells_arithmetic_and_names():
    from tensorflow.contrib.cudnn_rnn.python.layers import cudnn_rnn

    rng = np.random.RandomState(3)
    x = rng.randn(4, 2, 3).astype(np.float32)       # time-major, as cuDNN takes it
    h0, c0 = (rng.randn(2, 2, 5).astype(np.float32) for _ in range(2))
    lstm = v1.contrib.cudnn_rnn.CudnnLSTM(num_layers=2, num_units=5, direction=cudnn_rnn.CUDNN_RNN_UNIDIRECTION,
                                          dtype=tf.float32, dropout=0.5)
    outputs, (h, c) = lstm(x, initial_state=(h0, c0), training=False)
    prefix = "cudnn_lstm/rnn/multi_rnn_cell/cell_{}/cudnn_compatible_lstm_cell/"
    assert [v.op.name for v in lstm.trainable_variables] == [
        prefix.format(0) + "kernel", prefix.format(0) + "bias", prefix.format(1) + "kernel",
        prefix.format(1) + "bias"]
    assert outputs.shape.as_list() == [4, 2, 5] and h.shape.as_list() == c.shape.as_list() == [2, 2, 5]
    got_outputs, got_h, got_c, weights = _run([outputs, h, c, _by_name()])
    layer_input, want_h, want_c = x, [], []
    for layer in range(2):      # cuDNN's LSTM: no forget bias; layer 1 reads layer 0's outputs (no dropout: eval)
        layer_input, final_c, final_h = _numpy_lstm(layer_input, weights[prefix.format(layer) + "kernel"],
                                                    weights[prefix.format(layer) + "bias"], forget_bias=0.0,
                                                    h=h0[layer], c=c0[layer])
        want_h.append(final_h)
        want_c.append(final_c)
    np.testing.assert_allclose(got_outputs, layer_input, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_h, np.stack(want_h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_c, np.stack(want_c), rtol=1e-5, atol=1e-6)


def test_bidirectional_cudnn_lstm_concatenates_directions_and_stacks_states_forward_first():
    x = np.random.RandomState(4).randn(3, 2, 4).astype(np.float32)
    outputs, (h, c) = v1.contrib.cudnn_rnn.CudnnLSTM(
        num_layers=1, num_units=3, direction="bidirectional", dropout=0.0, seed=1,
        kernel_initializer=v1.get_variable_scope().initializer, bias_initializer=tf.zeros_initializer())(x)
    names = [v.op.name for v in v1.trainable_variables()]
    assert names == [f"cudnn_lstm/stack_bidirectional_rnn/cell_0/bidirectional_rnn/{direction}/"
                     f"cudnn_compatible_lstm_cell/{weight}" for direction in ("fw", "bw") for weight in ("kernel", "bias")]
    got_outputs, got_h, got_c, weights = _run([outputs, h, c, _by_name()])
    fw, fw_c, fw_h = _numpy_lstm(x, weights[names[0]], weights[names[1]], forget_bias=0.0)
    bw, bw_c, bw_h = _numpy_lstm(x[::-1], weights[names[2]], weights[names[3]], forget_bias=0.0)
    np.testing.assert_allclose(got_outputs, np.concatenate([fw, bw[::-1]], 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_h, np.stack([fw_h, bw_h]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_c, np.stack([fw_c, bw_c]), rtol=1e-5, atol=1e-6)


def _numpy_cudnn_gru(x, weights, prefix, lengths):
    """Time-major cuDNN GRU (reset gate applied after the recurrent matmul), frozen past each length."""
    gate_kernel, gate_bias = weights[prefix + "gates/kernel"], weights[prefix + "gates/bias"]
    units = gate_bias.shape[0] // 2
    h = np.zeros((x.shape[1], units), np.float32)
    outputs = []
    for t, step in enumerate(x):
        reset, update = np.split(_sigmoid(np.concatenate([step, h], 1) @ gate_kernel + gate_bias), 2, axis=1)
        candidate = np.tanh(step @ weights[prefix + "candidate/input_projection/kernel"]
                            + weights[prefix + "candidate/input_projection/bias"]
                            + reset * (h @ weights[prefix + "candidate/hidden_projection/kernel"]
                                       + weights[prefix + "candidate/hidden_projection/bias"]))
        new_h = (1 - update) * candidate + update * h
        running = (t < lengths)[:, None]
        h = np.where(running, new_h, h)
        outputs.append(np.where(running, new_h, 0))
    return np.stack(outputs), h


def test_cudnn_gru_with_dien_s_sequence_lengths_zeroes_outputs_past_each_length():
    from tensorflow.contrib.cudnn_rnn.python.layers import CudnnGRU

    x = np.random.RandomState(5).randn(4, 3, 2).astype(np.float32)
    lengths = np.array([4, 1, 3], np.int32)
    gru = CudnnGRU(num_layers=1, num_units=3)
    outputs, (h,) = gru(inputs=x, sequence_lengths=lengths)
    prefix = "cudnn_gru/rnn/multi_rnn_cell/cell_0/cudnn_compatible_gru_cell/"
    assert sorted(v.op.name for v in gru.trainable_variables) == sorted(prefix + name for name in (
        "gates/kernel", "gates/bias", "candidate/input_projection/kernel", "candidate/input_projection/bias",
        "candidate/hidden_projection/kernel", "candidate/hidden_projection/bias"))
    got_outputs, got_h, weights = _run([outputs, h, _by_name()])
    want_outputs, want_h = _numpy_cudnn_gru(x, weights, prefix, lengths)
    np.testing.assert_allclose(got_outputs, want_outputs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_h, want_h[None], rtol=1e-5, atol=1e-6)


def test_cudnn_layers_start_each_cudnn_matrix_and_bias_on_its_own_as_tf115_did():
    def rows_of_each_block(shape, dtype=None, partition_info=None):    # cuDNN's matrices are [units, rows]
        return tf.fill(shape, tf.cast(shape[1], dtype))

    inputs = tf.zeros([2, 1, 4])
    v1.contrib.cudnn_rnn.CudnnLSTM(1, 3, kernel_initializer=rows_of_each_block,
                                   bias_initializer=v1.constant_initializer(0.5))(inputs)
    v1.contrib.cudnn_rnn.CudnnGRU(1, 3, kernel_initializer=rows_of_each_block,
                                  bias_initializer=v1.constant_initializer(0.5))(inputs)
    weights = _run(_by_name())
    lstm = "cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/"
    gru = "cudnn_gru/rnn/multi_rnn_cell/cell_0/cudnn_compatible_gru_cell/"
    # input rows drawn as [units, input_size] matrices, recurrent rows as [units, units]; a gate's two biases add
    np.testing.assert_array_equal(weights[lstm + "kernel"][:, 0], [4, 4, 4, 4, 3, 3, 3])
    np.testing.assert_array_equal(weights[lstm + "bias"], np.ones(12))
    np.testing.assert_array_equal(weights[gru + "gates/kernel"][:, -1], [4, 4, 4, 4, 3, 3, 3])
    np.testing.assert_array_equal(weights[gru + "gates/bias"], np.ones(6))
    np.testing.assert_array_equal(weights[gru + "candidate/input_projection/kernel"], np.full((4, 3), 4))
    np.testing.assert_array_equal(weights[gru + "candidate/hidden_projection/bias"], np.full(3, 0.5))


def test_a_cudnn_lstm_checkpoint_restores_into_compatible_cells_as_jasper_infers(tmp_path):
    x = np.random.RandomState(6).randn(3, 2, 4).astype(np.float32)
    cudnn_rnn = v1.contrib.cudnn_rnn
    layer = cudnn_rnn.CudnnLSTM(num_layers=2, num_units=3, name="cudnn_rnn")
    layer.build(x.shape)            # as Jasper's language model does before calling it
    trained, _ = layer(x)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        want = sess.run(trained)
        v1.train.Saver().save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default():
        cell = v1.contrib.rnn.MultiRNNCell([cudnn_rnn.CudnnCompatibleLSTMCell(3) for _ in range(2)])
        with v1.variable_scope("cudnn_rnn"):
            inferred, _ = v1.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32, time_major=True)
        with v1.Session() as sess:
            v1.train.Saver().restore(sess, str(tmp_path / "model"))
            np.testing.assert_allclose(sess.run(inferred), want, rtol=1e-5, atol=1e-6)


def test_cudnn_dropout_falls_between_layers_only_and_batch_major_inputs_give_batch_major_outputs():
    x = tf.constant(np.random.RandomState(7).randn(2, 5, 3).astype(np.float32))     # [batch, time, input]
    two_layers = v1.contrib.cudnn_rnn.CudnnGRU(2, 4, dropout=0.9, seed=3)
    training, _ = two_layers(x, time_major=False)
    evaluating, _ = two_layers(x, time_major=False, training=False)
    one_layer = v1.contrib.cudnn_rnn.CudnnGRU(1, 4, dropout=0.9)
    one_training, _ = one_layer(tf.transpose(x, [1, 0, 2]))
    one_evaluating, _ = one_layer(tf.transpose(x, [1, 0, 2]), training=False)
    assert len(v1.trainable_variables()) == 18      # the second call of each layer reuses its variables
    got_training, got_evaluating, got_one_training, got_one_evaluating = _run(
        [training, evaluating, one_training, one_evaluating])
    assert got_training.shape == (2, 5, 4) and not np.allclose(got_training, got_evaluating)
    np.testing.assert_allclose(got_one_training, got_one_evaluating, rtol=1e-6)
    with pytest.raises(ValueError, match=r"CudnnLSTM: input_mode 'skip_input' is not provided.*linear_input"):
        v1.contrib.cudnn_rnn.CudnnLSTM(1, 3, input_mode="skip_input")
    with pytest.raises(ValueError, match=r"CudnnGRU expects inputs \[time, batch, input_size\]"):
        v1.contrib.cudnn_rnn.CudnnGRU(1, 3)(tf.zeros([2, 3]))
    with pytest.raises(ImportError, match=r"tf\.contrib\.cudnn_rnn\.CudnnRNNTanh is not provided"):
        v1.contrib.cudnn_rnn.CudnnRNNTanh  # noqa: B018  (the lookup is what raises)


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_attention_decoder_computes_tf115s_attention_with_its_variable_names():
    rng = np.random.RandomState(8)
    states = rng.randn(2, 3, 4).astype(np.float32)       # [batch, length, size], Attention-OCR's image features
    steps = [tf.constant(rng.randn(2, 5).astype(np.float32)) for _ in range(2)]
    cell = v1.contrib.rnn.BasicRNNCell(6)
    outputs, state = v1.contrib.legacy_seq2seq.attention_decoder(
        decoder_inputs=steps, initial_state=tf.zeros([2, 6]), attention_states=tf.constant(states), cell=cell)
    assert [v.op.name for v in v1.trainable_variables()] == [
        "attention_decoder/AttnW_0", "attention_decoder/AttnV_0", "attention_decoder/kernel",
        "attention_decoder/bias", "attention_decoder/basic_rnn_cell/kernel", "attention_decoder/basic_rnn_cell/bias",
        "attention_decoder/Attention_0/kernel", "attention_decoder/Attention_0/bias",
        "attention_decoder/AttnOutputProjection/kernel", "attention_decoder/AttnOutputProjection/bias"]
    assert len(outputs) == 2 and outputs[0].shape.as_list() == [2, 6]
    got_outputs, got_state, weights = _run([outputs, state, _by_name()])
    w = {name[len("attention_decoder/"):]: value for name, value in weights.items()}
    features = states @ w["AttnW_0"][0, 0]
    h, read = np.zeros((2, 6), np.float32), np.zeros((2, 4), np.float32)
    for step, got in zip(steps, got_outputs):
        x = np.concatenate([_run(step), read], 1) @ w["kernel"] + w["bias"]
        h = np.tanh(np.concatenate([x, h], 1) @ w["basic_rnn_cell/kernel"] + w["basic_rnn_cell/bias"])
        query = h @ w["Attention_0/kernel"] + w["Attention_0/bias"]
        scores = (w["AttnV_0"] * np.tanh(features + query[:, None, :])).sum(-1)
        read = (_softmax(scores)[:, :, None] * states).sum(1)
        want = np.concatenate([h, read], 1) @ w["AttnOutputProjection/kernel"] + w["AttnOutputProjection/bias"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_state, h, rtol=1e-4, atol=1e-5)


def test_attention_decoder_as_attention_ocr_calls_it_with_an_lstm_a_loop_function_and_two_heads():
    calls = []

    def loop_function(previous, step):
        calls.append(step)
        return tf.zeros_like(previous[:, :3])

    cell = v1.contrib.rnn.LSTMCell(4)
    outputs, state = v1.contrib.legacy_seq2seq.attention_decoder(
        [tf.zeros([2, 3])] * 3, cell.zero_state(2, tf.float32), tf.ones([2, 5, 6]), cell, output_size=7,
        num_heads=2, loop_function=loop_function, initial_state_attention=True)
    names = [v.op.name for v in v1.trainable_variables()]
    assert calls == [1, 2] and outputs[2].shape.as_list() == [2, 7]
    assert "attention_decoder/Attention_1/kernel" in names and "attention_decoder/AttnW_1" in names
    # the LSTM state tuple (c, h) is the query, concatenated: 8 wide
    assert v1.trainable_variables()[names.index("attention_decoder/Attention_0/kernel")].shape.as_list() == [8, 6]
    assert all(np.isfinite(value).all() for value in _run(outputs))
    with pytest.raises(ValueError, match=r"attention_decoder: num_heads must be at least 1"):
        v1.contrib.legacy_seq2seq.attention_decoder([tf.zeros([2, 3])], state, tf.ones([2, 5, 6]), cell, num_heads=0)


def test_embedding_attention_seq2seq_builds_tf115s_model_and_feeds_previous_through_a_cond():
    legacy = v1.contrib.legacy_seq2seq
    encoder_inputs = [tf.constant([1, 2]), tf.constant([3, 0])]
    decoder_inputs = [tf.constant([0, 0]), tf.constant([4, 1]), tf.constant([2, 2])]
    feed_previous = v1.placeholder(tf.bool, [])
    outputs, state = legacy.embedding_attention_seq2seq(
        encoder_inputs, decoder_inputs, v1.contrib.rnn.GRUCell(4), num_encoder_symbols=5, num_decoder_symbols=6,
        embedding_size=3, feed_previous=feed_previous)
    names = {v.op.name for v in v1.trainable_variables()}
    assert {"embedding_attention_seq2seq/rnn/embedding_wrapper/embedding",
            "embedding_attention_seq2seq/embedding_attention_decoder/embedding",
            "embedding_attention_seq2seq/embedding_attention_decoder/attention_decoder/AttnW_0",
            "embedding_attention_seq2seq/embedding_attention_decoder/attention_decoder/output_projection_wrapper/"
            "kernel"} <= names
    assert len(outputs) == 3 and outputs[0].shape.as_list() == [2, 6] and state.shape.as_list() == [2, 4]
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        teacher, fed = (sess.run(outputs, {feed_previous: value}) for value in (False, True))
    np.testing.assert_allclose(teacher[0], fed[0], rtol=1e-6)     # the first step reads the same input
    assert not np.allclose(teacher[1], fed[1])
