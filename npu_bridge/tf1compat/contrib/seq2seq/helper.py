"""tf.contrib.seq2seq's helpers: what a BasicDecoder feeds its cell at each step and when a sequence is done.
TrainingHelper reads the ground truth (teacher forcing), GreedyEmbeddingHelper feeds back the embedded argmax until
the end token; both as TF 1.15's (argmax sample ids in int32, zero / start inputs once every sequence is done)."""
import abc

import tensorflow as tf


class Helper(abc.ABC):
    """The interface BasicDecoder drives: initialize, sample, next_inputs, and the batch size and sample shape."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        """The batch size, a scalar (int or int32 tensor)."""

    @property
    @abc.abstractmethod
    def sample_ids_shape(self):
        """The TensorShape of one sample id, without the batch dimension."""

    @property
    @abc.abstractmethod
    def sample_ids_dtype(self):
        """The DType of the sample ids."""

    @abc.abstractmethod
    def initialize(self, name=None):
        """(initial_finished, initial_inputs)."""

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        """The sample ids of this step's outputs."""

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """(finished, next_inputs, next_state)."""


def _argmax_ids(outputs):
    if not isinstance(outputs, tf.Tensor):
        raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs).__name__}")
    return tf.cast(tf.argmax(outputs, axis=-1), tf.int32)


def _unless_all_finished(finished, when_all_finished, next_inputs):
    """next_inputs() while any sequence runs; once all are finished, when_all_finished (so nothing reads past the
    end of the inputs)."""
    return tf.cond(tf.reduce_all(finished), lambda: when_all_finished, next_inputs)


class _ArgmaxHelper(Helper):
    """The bookkeeping both helpers share: the batch size fixed when built (self._batch_size), scalar int32 sample
    ids, and the argmax of the outputs as the sample."""

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tf.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return tf.int32

    def sample(self, time, outputs, state, name=None):
        with tf.compat.v1.name_scope(name, f"{type(self).__name__}Sample", [time, outputs]):
            return _argmax_ids(outputs)


class TrainingHelper(_ArgmaxHelper):
    """Feeds inputs[:, t] (or inputs[t] when time_major) at step t; a sequence is finished at its length."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with tf.compat.v1.name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = tf.nest.map_structure(lambda x: tf.convert_to_tensor(x, name="inputs"), inputs)
            if not time_major:
                inputs = tf.nest.map_structure(_batch_major_to_time_major, inputs)
            self._input_tas = tf.nest.map_structure(_unstack_to_array, inputs)
            self._sequence_length = tf.convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError("TrainingHelper: expected sequence_length to be a vector, but received shape: "
                                 f"{self._sequence_length.shape}")
            self._zero_inputs = tf.nest.map_structure(lambda x: tf.zeros_like(x[0, :]), inputs)
            self._batch_size = tf.size(self._sequence_length)

    @property
    def inputs(self):
        return self._input_tas

    @property
    def sequence_length(self):
        return self._sequence_length

    def _read_or_zeros(self, finished, time):
        return _unless_all_finished(finished, self._zero_inputs,
                                    lambda: tf.nest.map_structure(lambda ta: ta.read(time), self._input_tas))

    def initialize(self, name=None):
        with tf.compat.v1.name_scope(name, "TrainingHelperInitialize"):
            finished = tf.equal(0, self._sequence_length)
            return finished, self._read_or_zeros(finished, 0)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.compat.v1.name_scope(name, "TrainingHelperNextInputs", [time, outputs, state]):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            return finished, self._read_or_zeros(finished, next_time), state


class GreedyEmbeddingHelper(_ArgmaxHelper):
    """Feeds embedding(argmax of the outputs) back in, starting from start_tokens; a sequence is finished when it
    emits end_token."""

    def __init__(self, embedding, start_tokens, end_token):
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            self._embedding_fn = lambda ids: tf.nn.embedding_lookup(embedding, ids)
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32, name="start_tokens")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError(f"GreedyEmbeddingHelper: start_tokens must be a vector, got shape "
                             f"{self._start_tokens.shape}")
        if self._end_token.shape.ndims != 0:
            raise ValueError(f"GreedyEmbeddingHelper: end_token must be a scalar, got shape {self._end_token.shape}")
        self._batch_size = tf.size(self._start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name=None):
        return tf.tile([False], [self._batch_size]), self._start_inputs

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = tf.equal(sample_ids, self._end_token)
        return finished, _unless_all_finished(finished, self._start_inputs,
                                              lambda: self._embedding_fn(sample_ids)), state


def _batch_major_to_time_major(tensor):
    if tensor.shape.ndims is None or tensor.shape.ndims < 2:
        raise ValueError(f"TrainingHelper: inputs {tensor.name} must be at least [batch, time], got shape "
                         f"{tensor.shape}")
    perm = [1, 0] + list(range(2, tensor.shape.ndims))
    return tf.transpose(tensor, perm)


def _unstack_to_array(tensor):
    return tf.TensorArray(dtype=tensor.dtype, size=tf.shape(tensor)[0],
                          element_shape=tensor.shape[1:]).unstack(tensor)
