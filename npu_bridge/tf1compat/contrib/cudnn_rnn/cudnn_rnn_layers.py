"""TF 1.15's CudnnLSTM and CudnnGRU layers on a CPU, computed with the cuDNN-compatible cells' arithmetic.

TF 1.15 ran these on cuDNN only. Here a layer is a stack of CudnnCompatibleLSTMCell / CudnnCompatibleGRUCell run
with dynamic_rnn, layer by layer, with TF 1.15's call: time-major inputs [time, batch, input] (time_major=False
for batch-major), `(outputs, (h, c))` for LSTM and `(outputs, (h,))` for GRU, each state
[num_layers * num_dirs, batch, num_units] (layer by layer, forward before backward), outputs
[time, batch, num_dirs * num_units]; sequence_lengths zero the outputs past each length and freeze the state at
it, and the backward direction reads each sequence from its own last step, as cuDNN's padded mode does.
dropout applies between layers (not to the inputs or to the last layer's outputs) when training.

What differs from TF 1.15: TF 1.15 kept the weights in one cuDNN-specific variable, `<layer>/opaque_kernel`, and
saved them, through a saveable, under the names the compatible cells use. Here those canonical variables are the
variables: `<layer>/rnn/multi_rnn_cell/cell_<i>/cudnn_compatible_lstm_cell/kernel|bias` (unidirectional) and
`<layer>/stack_bidirectional_rnn/cell_<i>/bidirectional_rnn/fw|bw/...` (bidirectional), so a TF 1.15 checkpoint
restores into the layer (its extra opaque_kernel entry is ignored) and a checkpoint written here restores into a
graph of compatible cells, as TF 1.15 documented; a TF 1.15 GPU graph cannot restore it (it looks for
opaque_kernel). Each weight starts as TF 1.15's did, kernel_initializer (default Glorot uniform, seeded by seed)
drawn once per cuDNN gate matrix and bias_initializer (default zeros) once per cuDNN bias, the two biases of a
gate added. input_mode 'skip_input' is not provided (nor 'auto_select' when it would mean skip_input).
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.cudnn_rnn import cudnn_rnn_ops as ops
from npu_bridge.tf1compat.contrib.rnn import LSTMStateTuple

v1 = tf.compat.v1


def _canonical_kernel_initializer(initializer, units):
    """An initializer for a compatible cell's kernel [rows, gates * units] that draws each cuDNN weight matrix
    [units, rows of that block] on its own: with several gates the rows are the input block then the recurrent
    block (the last `units` rows); with one gate (a GRU candidate projection) the kernel is one matrix."""
    def initialize(shape, dtype=None, partition_info=None):
        del partition_info
        rows, columns = (tf.compat.dimension_value(size) for size in shape)
        blocks = [rows - units, units] if columns > units else [rows]
        return tf.concat([tf.concat([tf.transpose(initializer([units, block], dtype=dtype))
                                     for _ in range(columns // units)], 1) for block in blocks], 0)
    return initialize


def _canonical_bias_initializer(initializer, units):
    """An initializer for a compatible cell's bias: per gate the sum of cuDNN's input and recurrent biases, each
    drawn on its own; a one-gate bias (a GRU candidate projection) is a single cuDNN bias."""
    def initialize(shape, dtype=None, partition_info=None):
        del partition_info
        size = tf.compat.dimension_value(shape[0])
        if size == units:
            return initializer([units], dtype=dtype)
        return tf.concat([initializer([units], dtype=dtype) + initializer([units], dtype=dtype)
                          for _ in range(size // units)], 0)
    return initialize


class _CudnnRNN:
    """The layer both CudnnLSTM and CudnnGRU are; subclasses name the cell and the state's parts."""

    _cell_class = None
    _rnn_mode = None
    _base_name = None

    def __init__(self, num_layers, num_units, input_mode=ops.CUDNN_INPUT_LINEAR_MODE,
                 direction=ops.CUDNN_RNN_UNIDIRECTION, dropout=0.0, seed=None, dtype=tf.float32,
                 kernel_initializer=None, bias_initializer=None, name=None):
        layer = type(self).__name__
        if direction not in (ops.CUDNN_RNN_UNIDIRECTION, ops.CUDNN_RNN_BIDIRECTION):
            raise ValueError(f"{layer}: direction must be '{ops.CUDNN_RNN_UNIDIRECTION}' or "
                             f"'{ops.CUDNN_RNN_BIDIRECTION}', got {direction!r}")
        if input_mode not in (ops.CUDNN_INPUT_LINEAR_MODE, ops.CUDNN_INPUT_AUTO_MODE):
            raise ValueError(f"{layer}: input_mode {input_mode!r} is not provided on a CPU; use "
                             f"'{ops.CUDNN_INPUT_LINEAR_MODE}' (TF 1.15's default)")
        dtype = tf.as_dtype(dtype)
        if dtype not in (tf.float16, tf.float32, tf.float64):
            raise ValueError(f"{layer}: only float16, float32 and float64 are supported, got {dtype.name}")
        self._num_layers = num_layers
        self._num_units = num_units
        self._input_mode = input_mode
        self._direction = direction
        self._dropout = dropout
        self._seed = seed
        self._dtype = dtype
        self._kernel_initializer = kernel_initializer or v1.glorot_uniform_initializer(seed=seed)
        self._bias_initializer = bias_initializer or v1.zeros_initializer()
        self._name = name or self._base_name
        self._input_size = None
        self._scope = None
        self._cells = None

    num_layers = property(lambda self: self._num_layers)
    num_units = property(lambda self: self._num_units)
    input_mode = property(lambda self: self._input_mode)
    direction = property(lambda self: self._direction)
    rnn_mode = property(lambda self: self._rnn_mode)
    dtype = property(lambda self: self._dtype)
    built = property(lambda self: self._cells is not None)

    @property
    def num_dirs(self):
        return 1 if self._direction == ops.CUDNN_RNN_UNIDIRECTION else 2

    @property
    def input_size(self):
        if self._input_size is None:
            raise ValueError("'input_size' is unknown since layer has not been built.")
        return self._input_size

    @property
    def trainable_variables(self):
        return [weight for layer in self._cells or () for cell in layer for weight in cell.trainable_weights]

    trainable_weights = variables = weights = trainable_variables

    def state_shape(self, batch_size):
        """The shape of each part of the state: [num_layers * num_dirs, batch_size, num_units]."""
        return tuple([self._num_layers * self.num_dirs, batch_size, self._num_units] for _ in self._state_parts())

    def build(self, input_shape):
        """Fix the input size and the layer's variable scope (the cells make their variables on the first call);
        ported scripts call it before the layer, as TF 1.15 allowed."""
        if self.built:
            return
        input_shape = tf.TensorShape(input_shape)
        if input_shape.ndims != 3 or tf.compat.dimension_value(input_shape[-1]) is None:
            raise ValueError(f"{type(self).__name__} expects inputs [time, batch, input_size] with a known "
                             f"input_size, got shape {input_shape}")
        self._input_size = tf.compat.dimension_value(input_shape[-1])
        if self._input_mode == ops.CUDNN_INPUT_AUTO_MODE and self._input_size == self._num_units:
            raise ValueError(f"{type(self).__name__}: input_mode 'auto_select' means 'skip_input' when "
                             f"input_size == num_units ({self._num_units}), which is not provided on a CPU; use "
                             f"'{ops.CUDNN_INPUT_LINEAR_MODE}'")
        with v1.variable_scope(None, default_name=self._name) as scope:
            self._scope = scope
        kernel = _canonical_kernel_initializer(self._kernel_initializer, self._num_units)
        bias = _canonical_bias_initializer(self._bias_initializer, self._num_units)
        self._cells = [[self._cell_class(self._num_units, kernel_initializer=kernel, bias_initializer=bias,
                                         dtype=self._dtype) for _ in range(self.num_dirs)]
                       for _ in range(self._num_layers)]

    def __call__(self, inputs, initial_state=None, sequence_lengths=None, time_major=True, training=True):
        """(outputs, state tuple) for inputs [time, batch, input_size] ([batch, time, ...] unless time_major)."""
        if initial_state is not None and not isinstance(initial_state, tuple):
            raise ValueError(f"{type(self).__name__}: initial_state must be a tuple {self._state_parts()} of "
                             f"[num_layers * num_dirs, batch, num_units] tensors, got {type(initial_state).__name__}")
        inputs = tf.convert_to_tensor(inputs, dtype=self._dtype)
        if not time_major:
            inputs = tf.transpose(inputs, [1, 0, 2])
        self.build(inputs.shape)
        with v1.variable_scope(self._scope):
            states = self._initial_states(initial_state)
            layer_input, finals = inputs, []
            for layer, cells in enumerate(self._cells):
                if layer > 0 and training and self._dropout > 0:
                    layer_input = v1.nn.dropout(layer_input, rate=self._dropout, seed=self._seed)
                layer_input, final = self._run_layer(layer, cells, layer_input, states, sequence_lengths)
                finals.extend(final)
        outputs = layer_input if time_major else tf.transpose(layer_input, [1, 0, 2])
        return outputs, self._stacked_states(finals)

    def _run_layer(self, layer, cells, layer_input, states, sequence_lengths):
        """One layer's (outputs, final states per direction), under TF 1.15's canonical scope names."""
        first = layer * self.num_dirs
        if self._direction == ops.CUDNN_RNN_UNIDIRECTION:
            with v1.variable_scope(f"rnn/multi_rnn_cell/cell_{layer}") as scope:
                outputs, state = v1.nn.dynamic_rnn(
                    cells[0], layer_input, sequence_length=sequence_lengths, time_major=True, scope=scope,
                    initial_state=None if states is None else states[first], dtype=self._dtype)
            return outputs, [state]
        with v1.variable_scope(f"stack_bidirectional_rnn/cell_{layer}"):
            (forward, backward), (state_fw, state_bw) = v1.nn.bidirectional_dynamic_rnn(
                cells[0], cells[1], layer_input, sequence_length=sequence_lengths, time_major=True,
                initial_state_fw=None if states is None else states[first],
                initial_state_bw=None if states is None else states[first + 1], dtype=self._dtype)
        return tf.concat([forward, backward], 2), [state_fw, state_bw]

    def _initial_states(self, initial_state):
        """Per layer and direction, the cell state cut from initial_state's stacked parts (None: zeros)."""
        if initial_state is None:
            return None
        parts = self._state_parts()
        if len(initial_state) != len(parts):
            raise ValueError(f"{type(self).__name__}: initial_state must have {len(parts)} part(s) {parts}, got "
                             f"{len(initial_state)}")
        unstacked = [tf.unstack(tf.convert_to_tensor(part, dtype=self._dtype),
                                num=self._num_layers * self.num_dirs) for part in initial_state]
        return [self._cell_state(*per_cell) for per_cell in zip(*unstacked)]

    def _state_parts(self):
        raise NotImplementedError

    def _cell_state(self, *parts):
        raise NotImplementedError

    def _stacked_states(self, finals):
        raise NotImplementedError


class CudnnLSTM(_CudnnRNN):
    """TF 1.15's cuDNN LSTM layer on a CPU (see the module docstring); state (h, c)."""

    _cell_class = ops.CudnnCompatibleLSTMCell
    _rnn_mode = ops.CUDNN_LSTM
    _base_name = "cudnn_lstm"

    def _state_parts(self):
        return ("h", "c")

    def _cell_state(self, h, c):
        return LSTMStateTuple(c, h)

    def _stacked_states(self, finals):
        return tf.stack([state.h for state in finals]), tf.stack([state.c for state in finals])


class CudnnGRU(_CudnnRNN):
    """TF 1.15's cuDNN GRU layer on a CPU (see the module docstring); state (h,)."""

    _cell_class = ops.CudnnCompatibleGRUCell
    _rnn_mode = ops.CUDNN_GRU
    _base_name = "cudnn_gru"

    def _state_parts(self):
        return ("h",)

    def _cell_state(self, h):
        return h

    def _stacked_states(self, finals):
        return (tf.stack(finals),)


__getattr__ = removed.module_getattr(__name__)
