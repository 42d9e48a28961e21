"""TF 1.15's contrib.rnn.python.ops.core_rnn_cell: the _Linear helper and the embedding and projection wrappers
legacy_seq2seq builds on, with TF 1.15's variable names (`kernel`, `bias`, `embedding`)."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed, rnn

v1 = tf.compat.v1
RNNCell = rnn.RNNCell


class _Linear:
    """sum_i(args[i] @ W_i) + b as one matmul over the concatenated args: variables `kernel` [total input size,
    output_size] and, with build_bias, `bias` [output_size], created in the current variable scope when made."""

    def __init__(self, args, output_size, build_bias, bias_initializer=None, kernel_initializer=None):
        self._build_bias = build_bias
        self._is_sequence = isinstance(args, (list, tuple))
        args = list(args) if self._is_sequence else [args]
        if not args:
            raise ValueError("_Linear needs at least one input tensor, got an empty list")
        sizes = [arg.get_shape()[-1] for arg in args]
        if any(arg.get_shape().rank != 2 for arg in args) or any(size is None for size in sizes):
            raise ValueError(f"_Linear expects 2-D inputs with a known last dimension, got shapes "
                             f"{[arg.get_shape() for arg in args]}")
        dtype = args[0].dtype
        self._weights = v1.get_variable("kernel", [sum(sizes), output_size], dtype=dtype,
                                        initializer=kernel_initializer)
        if build_bias:
            self._biases = v1.get_variable(
                "bias", [output_size], dtype=dtype,
                initializer=bias_initializer or v1.constant_initializer(0.0, dtype=dtype))

    def __call__(self, args):
        args = list(args) if self._is_sequence else [args]
        result = tf.matmul(args[0] if len(args) == 1 else tf.concat(args, 1), self._weights)
        return tf.nn.bias_add(result, self._biases) if self._build_bias else result


class _CellWrapper(RNNCell):
    """A cell around `cell` with the same state and, unless a subclass says otherwise, the same output size."""

    def __init__(self, cell, reuse):
        super().__init__(_reuse=reuse)
        self._cell = cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)


class EmbeddingWrapper(_CellWrapper):
    """Feeds the cell the embedding of integer symbol ids ([batch] or [batch, 1]); variable `embedding`
    [embedding_classes, embedding_size] in the cell's scope (TF 1.15 pinned it to the CPU; placement is moot here)."""

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(cell, reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"EmbeddingWrapper needs positive embedding_classes and embedding_size, got "
                             f"{embedding_classes} and {embedding_size}")
        self._embedding_classes = embedding_classes
        self._embedding_size = embedding_size
        self._initializer = initializer

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        initializer = self._initializer or v1.random_uniform_initializer(-(3 ** 0.5), 3 ** 0.5)
        data_type = tf.nest.flatten(state)[0].dtype
        embedding = v1.get_variable("embedding", [self._embedding_classes, self._embedding_size],
                                    initializer=initializer, dtype=data_type)
        embedded = tf.nn.embedding_lookup(embedding, tf.reshape(inputs, [-1]))
        return self._cell(embedded, state)


class InputProjectionWrapper(_CellWrapper):
    """Projects the inputs to num_proj with a _Linear (`kernel`, `bias` under `input_projection_wrapper`) before
    the cell."""

    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(cell, reuse)
        del input_size      # TF 1.15 ignored it too
        self._num_proj = num_proj
        self._activation = activation
        self._linear = None

    def call(self, inputs, state):
        if self._linear is None:
            self._linear = _Linear(inputs, self._num_proj, True)
        projected = self._linear(inputs)
        if self._activation:
            projected = self._activation(projected)
        return self._cell(projected, state)


class OutputProjectionWrapper(_CellWrapper):
    """Projects the cell's output to output_size with a _Linear (`kernel`, `bias` under
    `output_projection_wrapper`)."""

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(cell, reuse)
        if output_size < 1:
            raise ValueError(f"OutputProjectionWrapper needs a positive output_size, got {output_size}")
        self._output_size = output_size
        self._activation = activation
        self._linear = None

    @property
    def output_size(self):
        return self._output_size

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        if self._linear is None:
            self._linear = _Linear(output, self._output_size, True)
        projected = self._linear(output)
        if self._activation:
            projected = self._activation(projected)
        return projected, new_state


__getattr__ = removed.module_getattr(__name__)
