"""tf.contrib.seq2seq.BeamSearchDecoder on TF 2's public ops, with TF 1.15's arithmetic: each step keeps the
beam_width best (log-probability / length penalty) continuations of every batch entry, a finished beam only
extends by end_token at no cost, and finalize traces the beams back through the parent ids with gather_tree.

The caller tiles initial_state (and any memory) with tile_batch, so the cell runs on [batch * beam_width, ...];
the decoder's own state and outputs are [batch, beam_width, ...]. Coverage penalty needs the attention
wrapper's alignments and stays the contrib error."""
import collections

import tensorflow as tf

from npu_bridge.tf1compat.contrib.seq2seq.beam_search_ops import gather_tree
from npu_bridge.tf1compat.contrib.seq2seq.decoder import Decoder


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState",
        ("cell_state", "log_probs", "finished", "lengths", "accumulated_attention_probs"))):
    """The loop state: the cell's state and, per [batch, beam], the summed log probability, whether the beam has
    emitted end_token, and its length so far (int64)."""


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    """One step's [batch, beam] scores, chosen word ids and the beam each came from."""


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamSearchDecoderOutput", ("predicted_ids", "beam_search_decoder_output"))):
    """predicted_ids: the full beams after gather_tree; beam_search_decoder_output: the per-step outputs."""


def _length_penalty(lengths, weight):
    """TF 1.15's (GNMT's) ((5 + length) / 6) ** weight; exactly 1 when the weight is statically 0."""
    weight = tf.convert_to_tensor(weight, name="penalty_factor")
    weight.set_shape(())
    if tf.get_static_value(weight) == 0:
        return 1.0
    return tf.math.divide((5.0 + tf.cast(lengths, tf.float32)) ** weight, (5.0 + 1.0) ** weight)


def _mask_finished(log_probs, end_token, finished):
    """A finished beam's next-word log probabilities: 0 for end_token, the dtype's minimum for every other word."""
    vocab_size = tf.shape(log_probs)[2]
    finished_row = tf.one_hot(end_token, vocab_size, on_value=tf.constant(0.0, log_probs.dtype),
                              off_value=log_probs.dtype.min, dtype=log_probs.dtype)
    return tf.where(tf.broadcast_to(finished[:, :, None], tf.shape(log_probs)),
                    tf.broadcast_to(finished_row, tf.shape(log_probs)), log_probs)


def _check_coverage_penalty(weight):
    weight = tf.convert_to_tensor(weight, name="coverage_penalty_weight")
    if weight.shape.ndims != 0:
        raise ValueError(f"coverage_penalty_weight should be a scalar, but saw shape: {weight.shape}")
    if tf.get_static_value(weight) != 0:
        raise NotImplementedError(
            "BeamSearchDecoder: npu_bridge's TF 1.15 compatibility layer supports coverage_penalty_weight=0.0 only "
            f"(got {tf.get_static_value(weight)}); use tensorflow_addons.seq2seq.BeamSearchDecoder for the "
            "coverage penalty.")


class BeamSearchDecoder(Decoder):
    """Beam search over a cell whose state was tiled to batch * beam_width with tile_batch."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width, output_layer=None,
                 length_penalty_weight=0.0, coverage_penalty_weight=0.0, reorder_tensor_arrays=True):
        if not callable(cell) or not hasattr(cell, "state_size"):
            raise TypeError(f"BeamSearchDecoder: cell must be an RNNCell (callable with a state_size), got "
                            f"{type(cell).__name__}")
        if output_layer is not None and not callable(output_layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer).__name__}")
        _check_coverage_penalty(coverage_penalty_weight)
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = embedding if callable(embedding) else (
            lambda ids: tf.nn.embedding_lookup(embedding, ids))
        start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32, name="start_tokens")
        if start_tokens.shape.ndims != 1:
            raise ValueError(f"BeamSearchDecoder: start_tokens must be a vector, got shape {start_tokens.shape}")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError(f"BeamSearchDecoder: end_token must be a scalar, got shape {self._end_token.shape}")
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._batch_size = tf.size(start_tokens)
        self._static_batch_size = tf.compat.dimension_value(start_tokens.shape[0])
        self._initial_cell_state = tf.nest.map_structure(self._split_beams, initial_state)
        self._start_inputs = self._embedding_fn(tf.tile(start_tokens[:, None], [1, beam_width]))
        self._finished = tf.one_hot(tf.zeros([self._batch_size], tf.int32), depth=beam_width,
                                    on_value=False, off_value=True, dtype=tf.bool)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def tracks_own_finished(self):
        return True

    @property
    def output_size(self):
        beam = tf.TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=beam, predicted_ids=beam, parent_ids=beam)

    @property
    def output_dtype(self):
        dtype = tf.nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=dtype, predicted_ids=tf.int32, parent_ids=tf.int32)

    def _split_beams(self, tensor):
        """[batch * beam, ...] -> [batch, beam, ...]; TensorArrays and scalars pass through."""
        if isinstance(tensor, tf.TensorArray):
            return tensor
        tensor = tf.convert_to_tensor(tensor)
        if tensor.shape.ndims is None or tensor.shape.ndims < 1:
            return tensor
        rows = tf.compat.dimension_value(tensor.shape[0])
        if rows is not None and self._static_batch_size is not None and (
                rows != self._static_batch_size * self._beam_width):
            raise ValueError(
                f"BeamSearchDecoder: state tensor {tensor.name} has {rows} rows, expected batch_size * beam_width "
                f"= {self._static_batch_size} * {self._beam_width}. Tile the initial state with "
                f"tf.contrib.seq2seq.tile_batch(state, beam_width) (or create the zero_state with batch_size = "
                f"encoder batch_size * beam_width).")
        split = tf.reshape(tensor, tf.concat(([self._batch_size, self._beam_width], tf.shape(tensor)[1:]), 0))
        split.set_shape(tf.TensorShape([self._static_batch_size, self._beam_width]).concatenate(tensor.shape[1:]))
        return split

    def _merge_beams(self, tensor):
        """[batch, beam, ...] -> [batch * beam, ...]; TensorArrays and scalars pass through."""
        if isinstance(tensor, tf.TensorArray) or tensor.shape.ndims is None or tensor.shape.ndims < 2:
            return tensor
        merged = tf.reshape(tensor, tf.concat(([self._batch_size * self._beam_width], tf.shape(tensor)[2:]), 0))
        rows = None if self._static_batch_size is None else self._static_batch_size * self._beam_width
        merged.set_shape(tf.TensorShape([rows]).concatenate(tensor.shape[2:]))
        return merged

    def _gather_beams(self, tensor, beam_ids):
        """Each [batch, beam, ...] entry taken from the beam beam_ids names (TensorArrays and scalars kept)."""
        if isinstance(tensor, tf.TensorArray) or tensor.shape.ndims is None or tensor.shape.ndims < 2:
            return tensor
        return tf.gather(tensor, beam_ids, batch_dims=1)

    def initialize(self, name=None):
        dtype = tf.nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = tf.one_hot(tf.zeros([self._batch_size], tf.int32), depth=self._beam_width,
                               on_value=tf.constant(0.0, dtype), off_value=dtype.min, dtype=dtype)
        state = BeamSearchDecoderState(cell_state=self._initial_cell_state, log_probs=log_probs,
                                       finished=self._finished,
                                       lengths=tf.zeros([self._batch_size, self._beam_width], tf.int64),
                                       accumulated_attention_probs=())
        return self._finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        with tf.compat.v1.name_scope(name, "BeamSearchDecoderStep", (time, inputs, state)):
            cell_state = tf.nest.map_structure(self._merge_beams, state.cell_state)
            inputs = tf.nest.map_structure(self._merge_beams, inputs)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = tf.nest.map_structure(self._split_beams, cell_outputs)
            next_cell_state = tf.nest.pack_sequence_as(cell_state, tf.nest.flatten(next_cell_state))
            next_cell_state = tf.nest.map_structure(self._split_beams, next_cell_state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = self._search_step(cell_outputs, next_cell_state, state)
            next_inputs = tf.cond(tf.reduce_all(next_state.finished), lambda: self._start_inputs,
                                  lambda: self._embedding_fn(output.predicted_ids))
        return output, next_state, next_inputs, next_state.finished

    def _search_step(self, logits, next_cell_state, state):
        """The beam_width best continuations of each batch entry, scored as TF 1.15's _beam_search_step."""
        finished = state.finished
        vocab_size = tf.compat.dimension_value(logits.shape[-1]) or tf.shape(logits)[-1]
        step_log_probs = _mask_finished(tf.nn.log_softmax(logits), self._end_token, finished)
        total_log_probs = state.log_probs[:, :, None] + step_log_probs
        grows = tf.one_hot(tf.fill([self._batch_size, self._beam_width], self._end_token), depth=vocab_size,
                           on_value=tf.constant(0, tf.int64), off_value=tf.constant(1, tf.int64), dtype=tf.int64)
        candidate_lengths = state.lengths[:, :, None] + grows * tf.cast(tf.logical_not(finished), tf.int64)[:, :, None]
        scores = total_log_probs / tf.cast(_length_penalty(candidate_lengths, self._length_penalty_weight),
                                           total_log_probs.dtype)
        scores_flat = tf.reshape(scores, [self._batch_size, -1])
        next_scores, word_indices = tf.math.top_k(scores_flat, k=self._beam_width)
        next_scores.set_shape([self._static_batch_size, self._beam_width])
        word_indices.set_shape([self._static_batch_size, self._beam_width])
        next_log_probs = tf.gather(tf.reshape(total_log_probs, [self._batch_size, -1]), word_indices, batch_dims=1)
        next_word_ids = tf.cast(tf.math.floormod(word_indices, vocab_size), tf.int32)
        next_beam_ids = tf.cast(tf.math.floordiv(word_indices, vocab_size), tf.int32)
        parent_finished = tf.gather(finished, next_beam_ids, batch_dims=1)
        next_finished = tf.logical_or(parent_finished, tf.equal(next_word_ids, self._end_token))
        next_lengths = tf.gather(state.lengths, next_beam_ids, batch_dims=1) + tf.cast(
            tf.logical_not(parent_finished), tf.int64)
        for tensor in (next_log_probs, next_word_ids, next_beam_ids, next_finished, next_lengths):
            tensor.set_shape([self._static_batch_size, self._beam_width])
        next_cell_state = tf.nest.map_structure(lambda t: self._gather_beams(t, next_beam_ids), next_cell_state)
        next_state = BeamSearchDecoderState(cell_state=next_cell_state, log_probs=next_log_probs,
                                            finished=next_finished, lengths=next_lengths,
                                            accumulated_attention_probs=())
        return BeamSearchDecoderOutput(next_scores, next_word_ids, next_beam_ids), next_state

    def finalize(self, outputs, final_state, sequence_lengths):
        """Full beams through gather_tree (time-major here; dynamic_decode transposes them), and TensorArrays in
        the cell state reordered along the same parents when reorder_tensor_arrays."""
        del sequence_lengths
        max_lengths = tf.cast(tf.reduce_max(final_state.lengths, axis=1), tf.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_sequence_lengths=max_lengths,
                                    end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=tf.nest.map_structure(
                lambda t: self._reorder_array(t, outputs.parent_ids, final_state.lengths), final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids=predicted_ids, beam_search_decoder_output=outputs), \
            final_state

    def _reorder_array(self, array, parent_ids, lengths):
        """A TensorArray of [batch * beam, ...] per step, stacked and each beam's steps taken from its ancestors."""
        if not isinstance(array, tf.TensorArray):
            return array
        stacked = array.stack()
        if stacked.shape.ndims is None or stacked.shape.ndims < 2:
            return array
        shape = tf.shape(parent_ids)
        own_beam = tf.broadcast_to(tf.range(self._beam_width), shape)
        ancestors = gather_tree(own_beam, parent_ids, tf.cast(tf.reduce_max(lengths, axis=1), tf.int32),
                                end_token=self._beam_width + 1)
        in_bounds = tf.transpose(tf.sequence_mask(lengths, maxlen=shape[0]), [2, 0, 1])
        ancestors = tf.where(in_bounds, ancestors, own_beam)
        by_beam = tf.reshape(stacked, tf.concat((shape, [-1]), 0))
        ordered = tf.gather(by_beam, ancestors, batch_dims=2)
        return tf.reshape(ordered, tf.shape(stacked))
