"""tf.contrib.rnn: TF 1.15's RNN cells and static RNNs, from tf.compat.v1.nn, plus the contrib-only cells.

The core cells (LSTMCell, GRUCell, MultiRNNCell, DropoutWrapper, ...) are the ones TF 1.15's contrib.rnn
re-exported, so variable names match (`rnn/lstm_cell/kernel`, `.../bias`). LSTMBlockCell, LayerNormBasicLSTMCell,
NASCell and stack_bidirectional_dynamic_rnn are rebuilt here with TF 1.15's variable names and arithmetic.
"""
import sys

import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_CELL_NAMES = ("BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell", "LSTMCell",
               "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper")


def _rnn_cells():
    """{name: class} from tf.compat.v1.nn.rnn_cell; where TensorFlow routes that to Keras 3, which has no TF 1
    cells (TF >= 2.16 without TF_USE_LEGACY_KERAS, which npu-run sets), the same cells from tf_keras."""
    try:
        return {name: getattr(tf.compat.v1.nn.rnn_cell, name) for name in _CELL_NAMES}
    except AttributeError:
        from tf_keras.src.layers.rnn import legacy_cell_wrappers, legacy_cells

        return {name: getattr(legacy_cells, name, None) or getattr(legacy_cell_wrappers, name)
                for name in _CELL_NAMES}


_CELLS = _rnn_cells()
BasicLSTMCell = _CELLS["BasicLSTMCell"]
BasicRNNCell = _CELLS["BasicRNNCell"]
DeviceWrapper = _CELLS["DeviceWrapper"]
DropoutWrapper = _CELLS["DropoutWrapper"]
GRUCell = _CELLS["GRUCell"]
LSTMCell = _CELLS["LSTMCell"]
LSTMStateTuple = _CELLS["LSTMStateTuple"]
MultiRNNCell = _CELLS["MultiRNNCell"]
RNNCell = _CELLS["RNNCell"]
ResidualWrapper = _CELLS["ResidualWrapper"]
_LAYER_RNN_CELL = sys.modules[LSTMCell.__module__].LayerRNNCell     # RNNCell whose variables come from build()
static_rnn = tf.compat.v1.nn.static_rnn
static_bidirectional_rnn = tf.compat.v1.nn.static_bidirectional_rnn
static_state_saving_rnn = tf.compat.v1.nn.static_state_saving_rnn


class LSTMBlockCell(LSTMCell):
    """TF 1.15's fused LSTM cell, computed as LSTMCell computes it: the same gates in the same order (i, c~, f, o),
    forget bias, peepholes and cell clip, and the same variables (`lstm_cell/kernel`, `lstm_cell/bias`,
    `w_i_diag`/`w_f_diag`/`w_o_diag`), so its checkpoints restore and it gives the same outputs."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,
                 name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=cell_clip, forget_bias=forget_bias,
                         state_is_tuple=True, reuse=reuse, name=name, dtype=dtype)


class LayerNormBasicLSTMCell(RNNCell):
    """TF 1.15's LSTM cell with layer normalisation of each gate and of the new cell state, and recurrent dropout
    on the candidate (Ba et al. 2016; Semeniuta et al. 2016). Variables under `layer_norm_basic_lstm_cell/`: `kernel`
    (`bias` only without layer_norm) and `input|transform|forget|output|state/gamma|beta`."""

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=tf.math.tanh, layer_norm=True,
                 norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0, dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        del input_size      # TF 1.15 ignored it too
        self._num_units = num_units
        self._activation = activation
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def _norm(self, inputs, scope):
        from tf_slim.layers import layer_norm

        size = inputs.get_shape()[-1:]
        with tf.compat.v1.variable_scope(scope):
            tf.compat.v1.get_variable("gamma", size, inputs.dtype, tf.compat.v1.constant_initializer(self._norm_gain))
            tf.compat.v1.get_variable("beta", size, inputs.dtype, tf.compat.v1.constant_initializer(self._norm_shift))
        return layer_norm(inputs, reuse=True, scope=scope)

    def call(self, inputs, state):
        c, h = state
        args = tf.concat([inputs, h], 1)
        kernel = tf.compat.v1.get_variable("kernel", [args.get_shape()[-1], 4 * self._num_units], args.dtype)
        gates = tf.matmul(args, kernel)
        if not self._layer_norm:
            gates = tf.nn.bias_add(gates, tf.compat.v1.get_variable("bias", [4 * self._num_units], args.dtype))
        i, j, f, o = tf.split(gates, 4, axis=1)
        if self._layer_norm:
            i, j, f, o = (self._norm(gate, name) for gate, name in
                          ((i, "input"), (j, "transform"), (f, "forget"), (o, "output")))
        candidate = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            candidate = tf.compat.v1.nn.dropout(candidate, keep_prob=self._keep_prob, seed=self._seed)
        new_c = c * tf.sigmoid(f + self._forget_bias) + tf.sigmoid(i) * candidate
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * tf.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class NASCell(_LAYER_RNN_CELL):
    """TF 1.15's cell found by Neural Architecture Search (Zoph & Le 2017): eight input and eight recurrent
    projections combined through a fixed tree of sigmoids, relus and tanhs, with an optional output projection.
    Variables under `nas_cell/`: `kernel` [input, 8 * num_units], `recurrent_kernel` [num_proj or num_units,
    8 * num_units], `bias` with use_biases, `projection_weights` with num_proj."""

    def __init__(self, num_units, num_proj=None, use_biases=False, reuse=None, **kwargs):
        super().__init__(_reuse=reuse, **kwargs)
        self._num_units = num_units
        self._num_proj = num_proj
        self._use_biases = use_biases

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        input_size = inputs_shape[-1]
        if input_size is None:
            raise ValueError(f"NASCell needs inputs with a known last dimension, got shape {inputs_shape}")
        projections = 8 * self._num_units
        self._recurrent_kernel = self.add_weight("recurrent_kernel", [self.output_size, projections])
        self._kernel = self.add_weight("kernel", [input_size, projections])
        if self._use_biases:
            self._bias = self.add_weight("bias", [projections], initializer=tf.compat.v1.zeros_initializer())
        if self._num_proj is not None:
            self._projection = self.add_weight("projection_weights", [self._num_units, self._num_proj])
        self.built = True

    def call(self, inputs, state):
        c_prev, m_prev = state
        recurrent = tf.matmul(m_prev, self._recurrent_kernel)
        if self._use_biases:
            recurrent = tf.nn.bias_add(recurrent, self._bias)
        m = tf.split(recurrent, 8, axis=1)
        x = tf.split(tf.matmul(inputs, self._kernel), 8, axis=1)
        sigmoid, tanh, relu = tf.sigmoid, tf.tanh, tf.nn.relu
        layer1 = (sigmoid(x[0] + m[0]), relu(x[1] + m[1]), sigmoid(x[2] + m[2]), relu(x[3] * m[3]),
                  tanh(x[4] + m[4]), sigmoid(x[5] + m[5]), tanh(x[6] + m[6]), sigmoid(x[7] + m[7]))
        layer2_0 = tanh(tanh(layer1[0] * layer1[1]) + c_prev)     # the previous cell state enters here
        layer2_1 = tanh(layer1[2] + layer1[3])
        layer2_2 = tanh(layer1[4] * layer1[5])
        layer2_3 = sigmoid(layer1[6] + layer1[7])
        new_c = layer2_0 * layer2_1
        new_m = tanh(new_c * tanh(layer2_2 + layer2_3))
        if self._num_proj is not None:
            new_m = tf.matmul(new_m, self._projection)
        return new_m, LSTMStateTuple(new_c, new_m)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                                    dtype=None, sequence_length=None, parallel_iterations=None, time_major=False,
                                    scope=None, swap_memory=False):
    """Layers of bidirectional_dynamic_rnn, each fed the concatenated outputs of the one below (scopes
    `stack_bidirectional_rnn/cell_<i>/bidirectional_rnn/fw|bw`); (outputs, final fw states, final bw states)."""
    if not cells_fw or len(cells_fw) != len(cells_bw):
        raise ValueError("stack_bidirectional_dynamic_rnn needs as many forward cells as backward cells, at least "
                         f"one: got {len(cells_fw or ())} and {len(cells_bw or ())}")
    states_fw, states_bw = [], []
    layer_input = inputs
    with tf.compat.v1.variable_scope(scope or "stack_bidirectional_rnn"):
        for index, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with tf.compat.v1.variable_scope(f"cell_{index}"):
                (output_fw, output_bw), (state_fw, state_bw) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer_input,
                    initial_state_fw=initial_states_fw[index] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[index] if initial_states_bw else None,
                    sequence_length=sequence_length, parallel_iterations=parallel_iterations, dtype=dtype,
                    swap_memory=swap_memory, time_major=time_major)
                layer_input = tf.concat([output_fw, output_bw], 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer_input, tuple(states_fw), tuple(states_bw)


__getattr__ = removed.module_getattr(__name__)
