"""tf.contrib.seq2seq's Decoder interface and dynamic_decode, the v1 while loop that steps a decoder until every
sequence is finished (or maximum_iterations), as TF 1.15's: outputs stacked batch-major unless output_time_major,
a sequence's length is the step on which it finished, impute_finished zeroes outputs and freezes state after it."""
import abc

import tensorflow as tf


class Decoder(abc.ABC):
    """What dynamic_decode drives: initialize, step, the batch size and the output structure (finalize optional)."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        """The batch size, a scalar (int or int32 tensor)."""

    @property
    @abc.abstractmethod
    def output_size(self):
        """A structure of TensorShapes (or ints), one per output, without the batch dimension."""

    @property
    @abc.abstractmethod
    def output_dtype(self):
        """A structure of DTypes matching output_size."""

    @abc.abstractmethod
    def initialize(self, name=None):
        """(initial_finished, initial_inputs, initial_state)."""

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        """(outputs, next_state, next_inputs, finished)."""

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        """True when step's finished already includes the sequences finished before (beam search)."""
        return False


def _shape(batch_size, from_shape):
    if not isinstance(from_shape, tf.TensorShape) or from_shape.ndims == 0:
        return None
    batch_size = tf.get_static_value(tf.convert_to_tensor(batch_size, name="batch_size"))
    return tf.TensorShape([batch_size]).concatenate(from_shape)


def _zero_outputs(size, dtype, batch_size):
    def zeros(s, d):
        return tf.zeros(tf.stack([batch_size] + tf.TensorShape(s).as_list()), dtype=d)

    return tf.nest.map_structure(zeros, size, dtype)


def _keep_finished_state(finished, new, current):
    """The state a finished sequence keeps (impute_finished): its current value, not the step's new one."""
    if isinstance(new, tf.TensorArray) or new.shape.ndims == 0:
        return new
    return tf.compat.v1.where(finished, current, new)


def dynamic_decode(decoder, output_time_major=False, impute_finished=False, maximum_iterations=None,
                   parallel_iterations=32, swap_memory=False, scope=None):
    """Run `decoder` to the end: (final_outputs, final_state, final_sequence_lengths)."""
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder).__name__}")
    with tf.compat.v1.variable_scope(scope, "decoder") as varscope:
        if varscope.caching_device is None and not tf.executing_eagerly():
            varscope.set_caching_device(lambda op: op.device)
        if maximum_iterations is not None:
            maximum_iterations = tf.convert_to_tensor(maximum_iterations, dtype=tf.int32, name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError(f"dynamic_decode: maximum_iterations must be a scalar, got shape "
                                 f"{maximum_iterations.shape}")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = _zero_outputs(decoder.output_size, decoder.output_dtype, decoder.batch_size)
        if maximum_iterations is not None:
            initial_finished = tf.logical_or(initial_finished, 0 >= maximum_iterations)
        initial_lengths = tf.zeros_like(initial_finished, dtype=tf.int32)
        initial_time = tf.constant(0, dtype=tf.int32)
        initial_tas = tf.nest.map_structure(
            lambda size, dtype: tf.TensorArray(dtype=dtype, size=0, dynamic_size=True,
                                               element_shape=_shape(decoder.batch_size, tf.TensorShape(size))),
            decoder.output_size, decoder.output_dtype)

        def condition(time, outputs_ta, state, inputs, finished, lengths):
            return tf.logical_not(tf.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(time, inputs, state)
            next_finished = decoder_finished if decoder.tracks_own_finished else tf.logical_or(
                decoder_finished, finished)
            if maximum_iterations is not None:
                next_finished = tf.logical_or(next_finished, time + 1 >= maximum_iterations)
            next_lengths = tf.compat.v1.where(tf.logical_not(finished), tf.fill(tf.shape(lengths), time + 1),
                                              lengths)
            tf.nest.assert_same_structure(state, decoder_state)
            tf.nest.assert_same_structure(outputs_ta, next_outputs)
            tf.nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                emit = tf.nest.map_structure(lambda out, zero: tf.compat.v1.where(finished, zero, out),
                                             next_outputs, zero_outputs)
                next_state = tf.nest.map_structure(lambda new, cur: _keep_finished_state(finished, new, cur),
                                                   decoder_state, state)
            else:
                emit, next_state = next_outputs, decoder_state
            outputs_ta = tf.nest.map_structure(lambda ta, out: ta.write(time, out), outputs_ta, emit)
            return time + 1, outputs_ta, next_state, next_inputs, next_finished, next_lengths

        loop = tf.compat.v1.while_loop(
            condition, body,
            loop_vars=(initial_time, initial_tas, initial_state, initial_inputs, initial_finished, initial_lengths),
            parallel_iterations=parallel_iterations, maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_outputs_ta, final_state, final_lengths = loop[1], loop[2], loop[5]
        final_outputs = tf.nest.map_structure(lambda ta: ta.stack(), final_outputs_ta)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state, final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = tf.nest.map_structure(_time_major_to_batch_major, final_outputs)
    return final_outputs, final_state, final_lengths


def _time_major_to_batch_major(tensor):
    if tensor.shape.ndims is not None and tensor.shape.ndims < 2:
        return tensor
    return tf.transpose(tensor, [1, 0] + list(range(2, tensor.shape.ndims)))
