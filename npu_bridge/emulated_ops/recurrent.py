"""BasicLSTMCell, DynamicGruV2 and DynamicAUGRU: the NPU's fused recurrent cells, as matmuls and gates.

BasicLSTMCell is one step of TensorFlow's LSTMCell layout: w [input + hidden, 4 * hidden] over [x, h], gates in
the order i, j, f, o, forget_bias added to f; it returns (ct, ht, it, jt, ft, ot, tanhct).

DynamicGruV2 runs a GRU over time-major x [time, batch, input]: weight_input [input, 3 * hidden] and weight_hidden
[hidden, 3 * hidden] hold the gates in `gate_order` ("zrh": update, reset, new; or "rzh"), and with
reset_after=True (the NPU's only mode) the reset gate scales the hidden projection after the matmul:

    z = sigmoid(xz + hz), r = sigmoid(xr + hr), hidden_new = hn, n = tanh(xn + r * hn)
    h_t = z * h_{t-1} + (1 - z) * n

It returns the six [time, batch, hidden] tensors (y, output_h, update, reset, new, hidden_new); y is output_h.
DynamicAUGRU takes weight_att [time, batch] as well and scales the update gate by the attention score, as DIEN
does: update_att = (1 - att) * z, h_t = update_att * h_{t-1} + (1 - update_att) * n; it returns seven tensors,
update_att after update. With seq_length, a sequence's steps at or past its length keep its last state.
cell_clip is accepted and has no effect: the NPU documents that these ops do no clipping.
"""
import tensorflow.compat.v1 as tf

_GATE_ORDERS = ("zrh", "rzh")


def basic_lstm_cell(x, h, c, w, b, keep_prob=1.0, forget_bias=1.0, state_is_tuple=True, activation="tanh",
                    name=None):
    """One LSTM step: (ct, ht, it, jt, ft, ot, tanhct)."""
    if keep_prob != 1.0:
        raise ValueError(f"basic_lstm_cell: keep_prob={keep_prob!r} is not supported by the CPU emulation (only 1.0)")
    if activation != "tanh":
        raise ValueError(f"basic_lstm_cell: activation={activation!r} is not supported (only 'tanh')")
    with tf.name_scope(name, "BasicLSTMCell", [x, h, c, w, b]):
        gates = tf.matmul(tf.concat([x, h], axis=1), w) + b
        i, j, f, o = tf.split(gates, 4, axis=1)
        it, jt, ft, ot = tf.sigmoid(i), tf.tanh(j), tf.sigmoid(f + forget_bias), tf.sigmoid(o)
        ct = ft * c + it * jt
        tanhct = tf.tanh(ct)
        return ct, ot * tanhct, it, jt, ft, ot, tanhct


def _check_gru_args(op_name, direction, cell_depth, keep_prob, num_proj, time_major, activation, gate_order,
                    reset_after):
    supported = {"direction": (direction, "UNIDIRECTIONAL"), "cell_depth": (cell_depth, 1),
                 "keep_prob": (keep_prob, 1.0), "num_proj": (num_proj, 0), "time_major": (time_major, True),
                 "activation": (activation, "tanh"), "reset_after": (reset_after, True)}
    for arg, (value, only) in supported.items():
        if value != only:
            raise ValueError(f"{op_name}: {arg}={value!r} is not supported by the CPU emulation (only {only!r})")
    if gate_order not in _GATE_ORDERS:
        raise ValueError(f"{op_name}: gate_order={gate_order!r} is invalid, expected one of {_GATE_ORDERS}")


def _split_gates(projection, gate_order):
    first, second, new = tf.split(projection, 3, axis=1)
    return (first, second, new) if gate_order == "zrh" else (second, first, new)


def _run_gru(x, weight_input, weight_hidden, bias_input, bias_hidden, seq_length, init_h, gate_order,
             weight_att=None):
    """The per-step outputs stacked over time: [h, z, (update_att,) r, n, hn]."""
    x = tf.convert_to_tensor(x)
    dtype = x.dtype.base_dtype
    time_steps = tf.shape(x)[0]
    batch_size = tf.shape(x)[1]
    hidden_size = tf.shape(weight_hidden)[0]
    input_projection = tf.reshape(
        tf.matmul(tf.reshape(x, [-1, tf.shape(x)[2]]), weight_input) + bias_input, [time_steps, batch_size, -1])
    if init_h is None:
        init_h = tf.zeros([batch_size, hidden_size], dtype)
    init_h = tf.convert_to_tensor(init_h, dtype)
    if init_h.shape.ndims == 3:
        init_h = init_h[0]
    live = None
    if seq_length is not None:
        live = tf.sequence_mask(seq_length, time_steps, dtype=tf.bool)
        live = tf.transpose(live, [1, 0])[:, :, None]
    attention = None if weight_att is None else tf.convert_to_tensor(weight_att, dtype)[:, :, None]

    def step(previous, inputs):
        h_prev = previous[0]
        xz, xr, xn = _split_gates(inputs["x"], gate_order)
        hz, hr, hn = _split_gates(tf.matmul(h_prev, weight_hidden) + bias_hidden, gate_order)
        z = tf.sigmoid(xz + hz)
        r = tf.sigmoid(xr + hr)
        n = tf.tanh(xn + r * hn)
        gate = z if attention is None else (1.0 - inputs["att"]) * z
        h = gate * h_prev + (1.0 - gate) * n
        if live is not None:
            h = tf.where(tf.broadcast_to(inputs["live"], tf.shape(h)), h, h_prev)
        return [h, z] + ([] if attention is None else [gate]) + [r, n, hn]

    sequences = {"x": input_projection}
    if live is not None:
        sequences["live"] = live
    if attention is not None:
        sequences["att"] = attention
    count = 5 if attention is None else 6
    initial = [init_h] + [tf.zeros_like(init_h)] * (count - 1)
    return tf.scan(step, sequences, initializer=initial)


def dynamic_gru_v2(x, weight_input, weight_hidden, bias_input, bias_hidden, seq_length=None, init_h=None,
                   direction="UNIDIRECTIONAL", cell_depth=1, keep_prob=1.0, cell_clip=-1.0, num_proj=0,
                   time_major=True, activation="tanh", gate_order="zrh", reset_after=True, is_training=True,
                   name=None):
    """DynamicGruV2: (y, output_h, update, reset, new, hidden_new), each [time, batch, hidden]."""
    _check_gru_args("DynamicGRUV2", direction, cell_depth, keep_prob, num_proj, time_major, activation, gate_order,
                    reset_after)
    with tf.name_scope(name, "DynamicGruV2", [x, weight_input, weight_hidden, bias_input, bias_hidden]):
        h, z, r, n, hn = _run_gru(x, weight_input, weight_hidden, bias_input, bias_hidden, seq_length, init_h,
                                  gate_order)
        return h, h, z, r, n, hn


def dynamic_augru(x, weight_input, weight_hidden, weight_att, bias_input, bias_hidden, seq_length=None,
                  init_h=None, direction="UNIDIRECTIONAL", cell_depth=1, keep_prob=1.0, cell_clip=-1.0,
                  num_proj=0, time_major=True, activation="tanh", gate_order="zrh", reset_after=True,
                  is_training=True, name=None):
    """DynamicAUGRU: (y, output_h, update, update_att, reset, new, hidden_new), each [time, batch, hidden]."""
    _check_gru_args("DynamicAUGRU", direction, cell_depth, keep_prob, num_proj, time_major, activation, gate_order,
                    reset_after)
    with tf.name_scope(name, "DynamicAUGRU", [x, weight_input, weight_hidden, weight_att, bias_input, bias_hidden]):
        h, z, z_att, r, n, hn = _run_gru(x, weight_input, weight_hidden, bias_input, bias_hidden, seq_length, init_h,
                                         gate_order, weight_att)
        return h, h, z, z_att, r, n, hn
