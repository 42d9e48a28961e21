"""DynamicRNN: the NPU's fused, time-major LSTM, built on TensorFlow's BlockLSTM kernel.

The NPU op takes x [time, batch, input] and returns eight [time, batch, hidden] tensors:
y, output_h, output_c, i, j, f, o, tanhc. Its weight is one [input + hidden, 4 * hidden] matrix over the
concatenation [x_t, h_{t-1}] with the gates in the order i, j, f, o, plus a [4 * hidden] bias:

    i = sigmoid(i'), j = tanh(j'), f = sigmoid(f' + forget_bias), o = sigmoid(o')
    c_t = f * c_{t-1} + i * j,  tanhc = tanh(c_t),  h_t = o * tanhc,  y = output_h = h_t

TensorFlow's BlockLSTM computes the same cell with the same weight layout (its gate outputs i, ci, f, o, its
cell state cs, tanh(cs) as co, and h), and has a registered gradient, so training works. Only what the NPU
documents as supported is accepted: an LSTM cell, one direction, depth 1, no peephole, no projection,
keep_prob 1, tanh activation, time-major input, and full-length sequences (seq_length=None).

DynamicGRUV2 and DynamicAUGRU are the NPU's fused GRU and attention-update GRU (DIEN's AUGRU), with the real
layers' variables (weight_input [input, 3 * hidden], weight_hidden [hidden, 3 * hidden], bias_input, bias_hidden,
initialised uniformly in +-1/sqrt(hidden)); their cell equations are in npu_bridge.emulated_ops.recurrent.
"""
import math

import tensorflow.compat.v1 as tf

from npu_bridge.emulated_ops import recurrent

DYNAMIC_RNN_UNIDIRECTION = "UNIDIRECTIONAL"


class DynamicRNN:
    """Callable layer: `y, output_h, output_c, i, j, f, o, tanhc = DynamicRNN(hidden, tf.float32)(x)`."""

    def __init__(self, hidden_size, dtype, cell_type="LSTM", direction=DYNAMIC_RNN_UNIDIRECTION, cell_depth=1,
                 use_peephole=False, keep_prob=1.0, cell_clip=-1.0, num_proj=0, time_major=True,
                 activation="tanh", forget_bias=0.0, is_training=True, name=None):
        unsupported = {
            "cell_type": (cell_type, "LSTM"), "direction": (direction, DYNAMIC_RNN_UNIDIRECTION),
            "cell_depth": (cell_depth, 1), "use_peephole": (use_peephole, False), "keep_prob": (keep_prob, 1.0),
            "num_proj": (num_proj, 0), "time_major": (time_major, True), "activation": (activation, "tanh"),
        }
        for arg, (value, supported) in unsupported.items():
            if value != supported:
                raise ValueError(f"DynamicRNN: {arg}={value!r} is not supported (only {supported!r})")
        self._hidden_size = int(hidden_size)
        self._dtype = tf.as_dtype(dtype)
        self._cell_clip = float(cell_clip)
        self._forget_bias = float(forget_bias)
        self._name = name
        self._weight = None
        self._bias = None

    def _build(self, input_size):
        with tf.variable_scope(self._name, default_name="dynamic_rnn"):
            self._weight = tf.get_variable(
                "dynamicrnn/w", [input_size + self._hidden_size, 4 * self._hidden_size], self._dtype,
                initializer=tf.glorot_uniform_initializer())
            self._bias = tf.get_variable("dynamicrnn/b", [4 * self._hidden_size], self._dtype,
                                         initializer=tf.zeros_initializer())

    def _initial_state(self, state, batch_size):
        if state is None:
            return tf.zeros([batch_size, self._hidden_size], self._dtype)
        state = tf.convert_to_tensor(state, self._dtype)
        return state[0] if state.shape.ndims == 3 else state

    def __call__(self, x, seq_length=None, init_h=None, init_c=None, weight=None, bias=None):
        if seq_length is not None:
            raise ValueError("DynamicRNN: seq_length (per-example lengths) is not supported by the CPU emulation; "
                             "pass full-length time-major input")
        x = tf.convert_to_tensor(x, self._dtype)
        if x.shape.ndims != 3:
            raise ValueError(f"DynamicRNN: x must be [time, batch, input], got shape {x.shape}")
        if (weight is None or bias is None) and self._weight is None:
            self._build(int(x.shape[2]))
        weight = self._weight if weight is None else weight
        bias = self._bias if bias is None else bias
        batch_size = tf.shape(x)[1]
        zeros_peephole = tf.zeros([self._hidden_size], self._dtype)
        i, cs, f, o, ci, co, h = tf.raw_ops.BlockLSTM(
            seq_len_max=tf.cast(tf.shape(x)[0], tf.int64), x=x,
            cs_prev=self._initial_state(init_c, batch_size), h_prev=self._initial_state(init_h, batch_size),
            w=weight, wci=zeros_peephole, wcf=zeros_peephole, wco=zeros_peephole, b=bias,
            forget_bias=self._forget_bias, cell_clip=self._cell_clip, use_peephole=False, name="DynamicRNN")
        return h, h, cs, i, ci, f, o, co


class _DynamicGRUBase:
    """What DynamicGRUV2 and DynamicAUGRU share: the op's attributes, and the four variables built on first call."""

    _LAYER_NAME = None      # the real Keras layer's default name: its variables are <layer>/<scope>/<name>
    _SCOPE = None

    def __init__(self, hidden_size, dtype, direction=DYNAMIC_RNN_UNIDIRECTION, cell_depth=1, keep_prob=1.0,
                 cell_clip=-1.0, num_proj=0, time_major=True, activation="tanh", gate_order="zrh",
                 reset_after=True, is_training=True):
        self._hidden_size = int(hidden_size)
        self._dtype = tf.as_dtype(dtype)
        self._attrs = {"direction": direction, "cell_depth": cell_depth, "keep_prob": keep_prob,
                       "cell_clip": cell_clip, "num_proj": num_proj, "time_major": time_major,
                       "activation": activation, "gate_order": gate_order, "reset_after": reset_after,
                       "is_training": is_training}
        self._weights = None

    def _variables(self, x):
        if self._weights is None:
            if x.shape.ndims != 3 or x.shape.dims[2].value is None:
                raise ValueError(f"{type(self).__name__}: x must be [time, batch, input] with a known input size, "
                                 f"got shape {x.shape}")
            input_size = x.shape.dims[2].value
            bound = 1.0 / math.sqrt(self._hidden_size)
            init = tf.random_uniform_initializer(-bound, bound)
            shapes = {"weight_input": [input_size, 3 * self._hidden_size],
                      "weight_hidden": [self._hidden_size, 3 * self._hidden_size],
                      "bias_input": [3 * self._hidden_size], "bias_hidden": [3 * self._hidden_size]}
            with tf.variable_scope(None, default_name=self._LAYER_NAME):
                self._weights = {key: tf.get_variable(f"{self._SCOPE}/{key}", shape, self._dtype, initializer=init)
                                 for key, shape in shapes.items()}
        return self._weights


class DynamicGRUV2(_DynamicGRUBase):
    """Callable layer: `y, output_h, update, reset, new, hidden_new = DynamicGRUV2(hidden, tf.float32)(x)`."""

    _LAYER_NAME = "dynamic_gruv2"
    _SCOPE = "dynamicgruv2"

    def __call__(self, x, seq_length=None, init_h=None):
        x = tf.convert_to_tensor(x, self._dtype)
        return recurrent.dynamic_gru_v2(x, seq_length=seq_length, init_h=init_h, **self._variables(x),
                                        **self._attrs)


class DynamicAUGRU(_DynamicGRUBase):
    """Callable layer: `y, output_h, update, update_att, reset, new, hidden_new = DynamicAUGRU(hidden,
    tf.float32)(x, weight_att)`, weight_att being the attention scores [time, batch]."""

    _LAYER_NAME = "dynamic_augru"
    _SCOPE = "dynamicaugru"

    def __call__(self, x, weight_att, seq_length=None, init_h=None):
        x = tf.convert_to_tensor(x, self._dtype)
        return recurrent.dynamic_augru(x, weight_att=weight_att, seq_length=seq_length, init_h=init_h,
                                       **self._variables(x), **self._attrs)
