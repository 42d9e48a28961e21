"""TF 1.15's cudnn_rnn_ops names ported scripts use: the mode and direction constants, and the two cells TF 1.15
documented as the platform-independent equivalents of cuDNN's LSTM and GRU (a checkpoint of a CudnnLSTM / CudnnGRU
layer restores into them). Each cell keeps TF 1.15's variable names and arithmetic:

- CudnnCompatibleLSTMCell: TF 1.15's LSTMBlockCell with forget_bias 0, no peepholes, no clipping, under
  `cudnn_compatible_lstm_cell/` with `kernel` [input + units, 4 * units] (gates i, c~, f, o) and `bias`.
- CudnnCompatibleGRUCell: cuDNN's GRU, whose candidate applies the reset gate after the recurrent matmul,
  h~ = tanh(x W_h + b_Wh + r * (h R_h + b_Rh)), unlike GRUCell; under `cudnn_compatible_gru_cell/` with
  `gates/kernel|bias` (r, u) and `candidate/input_projection/kernel|bias`, `candidate/hidden_projection/kernel|bias`.

The cells also take bias_initializer (TF 1.15's GRU cell had it, its LSTM cell had zeros): the layers use both
initializers to start the weights as TF 1.15's layers did, one draw per cuDNN weight matrix.
"""
import sys

import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed, rnn

CUDNN_RNN_UNIDIRECTION = "unidirectional"
CUDNN_RNN_BIDIRECTION = "bidirectional"
CUDNN_LSTM = "lstm"
CUDNN_GRU = "gru"
CUDNN_RNN_RELU = "rnn_relu"
CUDNN_RNN_TANH = "rnn_tanh"
CUDNN_LSTM_PARAMS_PER_LAYER = 8
CUDNN_GRU_PARAMS_PER_LAYER = 6
CUDNN_RNN_TANH_PARAMS_PER_LAYER = 2
CUDNN_RNN_RELU_PARAMS_PER_LAYER = 2
CUDNN_INPUT_LINEAR_MODE = "linear_input"
CUDNN_INPUT_SKIP_MODE = "skip_input"
CUDNN_INPUT_AUTO_MODE = "auto_select"

_LayerRNNCell = sys.modules[rnn.LSTMCell.__module__].LayerRNNCell     # the TF 1 cell base whose build() makes weights


def _known_input_depth(cell, inputs_shape):
    depth = tf.compat.dimension_value(tf.TensorShape(inputs_shape)[-1])
    if depth is None:
        raise ValueError(f"{type(cell).__name__} needs inputs with a known last dimension, got shape {inputs_shape}")
    return depth


class CudnnCompatibleLSTMCell(_LayerRNNCell):
    """The LSTM cell whose weights a CudnnLSTM layer's checkpoint holds (see the module docstring)."""

    def __init__(self, num_units, reuse=None, kernel_initializer=None, bias_initializer=None, dtype=None):
        super().__init__(_reuse=reuse, name="cudnn_compatible_lstm_cell", dtype=dtype)
        self._num_units = num_units
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer or tf.compat.v1.zeros_initializer()

    @property
    def state_size(self):
        return rnn.LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _known_input_depth(self, inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, 4 * self._num_units],
                                       initializer=self._kernel_initializer)
        self._bias = self.add_weight("bias", [4 * self._num_units], initializer=self._bias_initializer)
        self.built = True

    def call(self, inputs, state):
        c, h = state
        gates = tf.nn.bias_add(tf.matmul(tf.concat([inputs, h], 1), self._kernel), self._bias)
        i, candidate, f, o = tf.split(gates, 4, axis=1)
        new_c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(candidate)
        new_h = tf.tanh(new_c) * tf.sigmoid(o)
        return new_h, rnn.LSTMStateTuple(new_c, new_h)


class CudnnCompatibleGRUCell(_LayerRNNCell):
    """The GRU cell whose weights a CudnnGRU layer's checkpoint holds (see the module docstring). Default starts
    as TF 1.15's: gate bias 1, candidate biases 0."""

    def __init__(self, num_units, reuse=None, kernel_initializer=None, bias_initializer=None, dtype=None):
        super().__init__(_reuse=reuse, name="cudnn_compatible_gru_cell", dtype=dtype)
        self._num_units = num_units
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth, units = _known_input_depth(self, inputs_shape), self._num_units
        gate_bias = self._bias_initializer or tf.compat.v1.constant_initializer(1.0)
        candidate_bias = self._bias_initializer or tf.compat.v1.zeros_initializer()
        self._gate_kernel = self.add_weight("gates/kernel", [depth + units, 2 * units],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight("gates/bias", [2 * units], initializer=gate_bias)
        self._input_kernel = self.add_weight("candidate/input_projection/kernel", [depth, units],
                                             initializer=self._kernel_initializer)
        self._hidden_kernel = self.add_weight("candidate/hidden_projection/kernel", [units, units],
                                              initializer=self._kernel_initializer)
        self._input_bias = self.add_weight("candidate/input_projection/bias", [units], initializer=candidate_bias)
        self._hidden_bias = self.add_weight("candidate/hidden_projection/bias", [units], initializer=candidate_bias)
        self.built = True

    def call(self, inputs, state):
        gates = tf.sigmoid(tf.nn.bias_add(tf.matmul(tf.concat([inputs, state], 1), self._gate_kernel),
                                          self._gate_bias))
        reset, update = tf.split(gates, 2, axis=1)
        candidate = tf.nn.bias_add(tf.matmul(inputs, self._input_kernel), self._input_bias)
        candidate += reset * tf.nn.bias_add(tf.matmul(state, self._hidden_kernel), self._hidden_bias)
        new_h = (1 - update) * tf.tanh(candidate) + update * state
        return new_h, new_h


__getattr__ = removed.module_getattr(__name__)
