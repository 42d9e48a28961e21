"""tf.contrib.legacy_seq2seq: TF 1.15's list-of-steps decoder and sequence losses, which older ported seq2seq and
char-RNN scripts use (the time steps are Python lists of [batch, ...] tensors, unrolled in the graph).

rnn_decoder shares one set of cell variables across steps under `rnn_decoder/`, as TF 1.15 did, so its checkpoints
restore; the losses weight each step's cross-entropy and average as TF 1.15 documented. attention_decoder and the
embedding_attention_* builders on top of it compute TF 1.15's attention (Bahdanau-style, over attention_states
[batch, length, size]) with its variable names (see attention_decoder).
"""
import copy

import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.rnn import static_rnn
from npu_bridge.tf1compat.contrib.rnn.python.ops.core_rnn_cell import (
    EmbeddingWrapper,
    OutputProjectionWrapper,
    _Linear,
)

v1 = tf.compat.v1


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """Runs `cell` over the decoder_inputs list from initial_state: (outputs list, final state). With
    loop_function(previous output, step), each step after the first is fed that instead of its input."""
    with v1.variable_scope(scope or "rnn_decoder"):
        state, outputs, previous = initial_state, [], None
        for step, step_input in enumerate(decoder_inputs):
            if loop_function is not None and previous is not None:
                with v1.variable_scope("loop_function", reuse=True):
                    step_input = loop_function(previous, step)
            if step > 0:
                v1.get_variable_scope().reuse_variables()
            output, state = cell(step_input, state)
            outputs.append(output)
            if loop_function is not None:
                previous = output
    return outputs, state


def _check_lengths(function, logits, targets, weights):
    if not (len(logits) == len(targets) == len(weights)):
        raise ValueError(f"legacy_seq2seq.{function}: logits, targets and weights must be lists of one tensor per "
                         f"step, of the same length; got {len(logits)}, {len(targets)} and {len(weights)}")


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True, softmax_loss_function=None,
                             name=None):
    """Per example, the weighted sum over steps of the cross-entropy, divided by the summed weights (plus 1e-12)
    with average_across_timesteps: [batch]."""
    _check_lengths("sequence_loss_by_example", logits, targets, weights)
    with tf.name_scope(name or "sequence_loss_by_example"):
        weighted = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(target, [-1]),
                                                                          logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            weighted.append(crossent * weight)
        log_perplexities = tf.add_n(weighted)
        if average_across_timesteps:
            log_perplexities /= tf.add_n(weights) + 1e-12
    return log_perplexities


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  softmax_loss_function=None, name=None):
    """The sum over the batch of sequence_loss_by_example, divided by the batch size with average_across_batch."""
    _check_lengths("sequence_loss", logits, targets, weights)
    with tf.name_scope(name or "sequence_loss"):
        cost = tf.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            return cost / tf.cast(tf.shape(targets[0])[0], cost.dtype)
        return cost


class _Attention:
    """TF 1.15's attention heads over attention_states [batch, length, size]. Head a has a 1x1 convolution of the
    states (`AttnW_<a>` [1, 1, size, size]) and a vector `AttnV_<a>` [size], made where the heads are built, and a
    linear map of the query (`Attention_<a>/kernel`, `bias`), made on the first query: the scores
    v . tanh(W h_j + U query), softmaxed over j in float32, weight the states into one read [batch, size]."""

    def __init__(self, attention_states, num_heads, dtype):
        self._size = tf.compat.dimension_value(attention_states.shape[2])
        self._length = tf.compat.dimension_value(attention_states.shape[1]) or tf.shape(attention_states)[1]
        self._dtype = dtype
        self._states = tf.reshape(attention_states, [-1, self._length, 1, self._size])
        self._features, self._vectors = [], []
        for head in range(num_heads):
            kernel = v1.get_variable(f"AttnW_{head}", [1, 1, self._size, self._size], dtype=dtype)
            self._features.append(tf.nn.conv2d(self._states, kernel, [1, 1, 1, 1], "SAME"))
            self._vectors.append(v1.get_variable(f"AttnV_{head}", [self._size], dtype=dtype))

    def zero_reads(self, batch_size):
        reads = [tf.zeros(tf.stack([batch_size, self._size]), dtype=self._dtype) for _ in self._vectors]
        for read in reads:
            read.set_shape([None, self._size])
        return reads

    def __call__(self, query):
        """One read per head for query (a state: a tuple state is concatenated, as TF 1.15 did)."""
        query = tf.concat(tf.nest.flatten(query), 1) if tf.nest.is_nested(query) else query
        reads = []
        for head, (features, vector) in enumerate(zip(self._features, self._vectors)):
            with v1.variable_scope(f"Attention_{head}"):
                projected = tf.cast(tf.reshape(_Linear(query, self._size, True)(query), [-1, 1, 1, self._size]),
                                    self._dtype)
                scores = tf.reduce_sum(vector * tf.tanh(features + projected), [2, 3])
                weights = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32)), self._dtype)
                read = tf.reduce_sum(tf.reshape(weights, [-1, self._length, 1, 1]) * self._states, [1, 2])
                reads.append(tf.reshape(read, [-1, self._size]))
        return reads


def _check_attention_arguments(decoder_inputs, attention_states, num_heads):
    if not decoder_inputs:
        raise ValueError("legacy_seq2seq.attention_decoder: decoder_inputs must be a list of at least one step")
    if num_heads < 1:
        raise ValueError(f"legacy_seq2seq.attention_decoder: num_heads must be at least 1 (got {num_heads}); "
                         "without attention use rnn_decoder")
    if tf.compat.dimension_value(attention_states.shape[2]) is None:
        raise ValueError("legacy_seq2seq.attention_decoder: the last dimension (shape[2]) of attention_states must "
                         f"be known, got shape {attention_states.shape}")


def attention_decoder(decoder_inputs, initial_state, attention_states, cell, output_size=None, num_heads=1,
                      loop_function=None, dtype=None, scope=None, initial_state_attention=False):
    """TF 1.15's RNN decoder with attention over attention_states [batch, length, size]: (outputs list, state).

    Each step feeds the cell a linear map (`kernel`, `bias` in the decoder's scope) of the step's input and the
    previous step's attention reads (zeros at the first step, or the reads for initial_state with
    initial_state_attention), reads the attention with the new state, and outputs a linear map
    (`AttnOutputProjection/kernel`, `bias`) of the cell output and the reads, output_size wide (the cell's output
    size by default). Everything is under `attention_decoder/` unless scope says otherwise, shared by all steps.
    With loop_function(previous output, step), steps after the first are fed that instead of their input.
    """
    _check_attention_arguments(decoder_inputs, attention_states, num_heads)
    if output_size is None:
        output_size = cell.output_size
    with v1.variable_scope(scope or "attention_decoder", dtype=dtype) as decoder_scope:
        dtype = decoder_scope.dtype
        attention = _Attention(attention_states, num_heads, dtype)
        reads = attention(initial_state) if initial_state_attention else attention.zero_reads(
            tf.shape(decoder_inputs[0])[0])
        state, outputs, previous = initial_state, [], None
        for step, step_input in enumerate(decoder_inputs):
            if step > 0:
                v1.get_variable_scope().reuse_variables()
            if loop_function is not None and previous is not None:
                with v1.variable_scope("loop_function", reuse=True):
                    step_input = loop_function(previous, step)
            input_size = tf.compat.dimension_value(step_input.shape.with_rank(2)[1])
            if input_size is None:
                raise ValueError(f"legacy_seq2seq.attention_decoder: could not infer the input size of step {step} "
                                 f"from {step_input.name} (shape {step_input.shape})")
            cell_inputs = [tf.cast(tensor, dtype) for tensor in [step_input] + reads]
            cell_output, state = cell(_Linear(cell_inputs, input_size, True)(cell_inputs), state)
            with v1.variable_scope(v1.get_variable_scope(), reuse=True if initial_state_attention else None):
                reads = attention(state)
            with v1.variable_scope("AttnOutputProjection"):
                projection_inputs = [tf.cast(cell_output, dtype)] + reads
                output = _Linear(projection_inputs, output_size, True)(projection_inputs)
            if loop_function is not None:
                previous = output
            outputs.append(output)
    return outputs, state


def _argmax_and_embed(embedding, output_projection, update_embedding):
    """TF 1.15's loop function for feed_previous: the embedding of the previous output's argmax symbol (after
    output_projection (W, b) when given), without its gradient unless update_embedding."""
    def loop_function(previous, _):
        if output_projection is not None:
            previous = tf.compat.v1.nn.xw_plus_b(previous, output_projection[0], output_projection[1])
        embedded = tf.nn.embedding_lookup(embedding, tf.argmax(previous, 1))
        return embedded if update_embedding else tf.stop_gradient(embedded)
    return loop_function


def embedding_attention_decoder(decoder_inputs, initial_state, attention_states, cell, num_symbols, embedding_size,
                                num_heads=1, output_size=None, output_projection=None, feed_previous=False,
                                update_embedding_for_previous=True, dtype=None, scope=None,
                                initial_state_attention=False):
    """attention_decoder over the embeddings (`embedding` [num_symbols, embedding_size] under
    `embedding_attention_decoder/`) of the integer decoder_inputs; with feed_previous, every step after the first
    is fed the embedded argmax of the previous output instead."""
    if output_size is None:
        output_size = cell.output_size
    if output_projection is not None:
        biases = tf.convert_to_tensor(output_projection[1], dtype=dtype)
        biases.shape.assert_is_compatible_with([num_symbols])
    with v1.variable_scope(scope or "embedding_attention_decoder", dtype=dtype):
        embedding = v1.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _argmax_and_embed(embedding, output_projection,
                                          update_embedding_for_previous) if feed_previous else None
        embedded = [tf.nn.embedding_lookup(embedding, step) for step in decoder_inputs]
        return attention_decoder(embedded, initial_state, attention_states, cell, output_size=output_size,
                                 num_heads=num_heads, loop_function=loop_function,
                                 initial_state_attention=initial_state_attention)


def embedding_attention_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols, num_decoder_symbols,
                                embedding_size, num_heads=1, output_projection=None, feed_previous=False, dtype=None,
                                scope=None, initial_state_attention=False):
    """TF 1.15's embedding sequence-to-sequence model with attention, under `embedding_attention_seq2seq/`: a copy
    of cell behind an EmbeddingWrapper encodes encoder_inputs with static_rnn (`rnn/embedding_wrapper/...`), and
    embedding_attention_decoder decodes over its outputs, the cell wrapped in an OutputProjectionWrapper to
    num_decoder_symbols unless output_projection is given. feed_previous may be a bool tensor: both decoders are
    built (sharing variables) and a cond picks one, as TF 1.15 did. (outputs list, state)."""
    with v1.variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) as model_scope:
        dtype = model_scope.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        encoder_outputs, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        attention_states = tf.concat([tf.reshape(output, [-1, 1, cell.output_size]) for output in encoder_outputs],
                                     1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols

        def decode(feed, update_embedding=True):
            return embedding_attention_decoder(
                decoder_inputs, encoder_state, attention_states, cell, num_decoder_symbols, embedding_size,
                num_heads=num_heads, output_size=output_size, output_projection=output_projection,
                feed_previous=feed, update_embedding_for_previous=update_embedding,
                initial_state_attention=initial_state_attention)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)

        def branch(feed):
            with v1.variable_scope(v1.get_variable_scope(), reuse=None if feed else True):
                outputs, state = decode(feed, update_embedding=False)
                return outputs + tf.nest.flatten(state)

        results = tf.cond(feed_previous, lambda: branch(True), lambda: branch(False))
        steps = len(decoder_inputs)
        return results[:steps], tf.nest.pack_sequence_as(encoder_state, results[steps:])


__getattr__ = removed.module_getattr(__name__)
