"""tf.contrib.seq2seq: the stateless helpers ported scripts use most (tile_batch for beam search, hardmax,
sequence_loss), with TF 1.15's arithmetic and op names, and the decoder framework (Decoder, dynamic_decode,
BasicDecoder, the training and greedy helpers, gather_tree), the Bahdanau / Luong attention wrappers and
BeamSearchDecoder. The monotonic attention variants live on in tensorflow_addons.seq2seq, which the error for those
names says."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.seq2seq.attention_wrapper import (  # noqa: F401
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    LuongAttention,
)
from npu_bridge.tf1compat.contrib.seq2seq.basic_decoder import (  # noqa: F401
    BasicDecoder,
    BasicDecoderOutput,
)
from npu_bridge.tf1compat.contrib.seq2seq.beam_search_decoder import (  # noqa: F401
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput,
)
from npu_bridge.tf1compat.contrib.seq2seq.beam_search_ops import gather_tree  # noqa: F401
from npu_bridge.tf1compat.contrib.seq2seq.decoder import Decoder, dynamic_decode  # noqa: F401
from npu_bridge.tf1compat.contrib.seq2seq.helper import (  # noqa: F401
    GreedyEmbeddingHelper,
    Helper,
    TrainingHelper,
)


def _tile_one(tensor, multiplier):
    tensor = tf.convert_to_tensor(tensor, name="t")
    if tensor.shape.ndims is None or tensor.shape.ndims < 1:
        raise ValueError(f"tile_batch: {tensor.name} must have a statically known rank of at least 1")
    shape = tf.shape(tensor)
    tiling = [1] * (tensor.shape.ndims + 1)
    tiling[1] = multiplier
    batch = tf.compat.dimension_value(tensor.shape[0])
    tiled = tf.tile(tf.expand_dims(tensor, 1), tiling)
    tiled = tf.reshape(tiled, tf.concat(([shape[0] * multiplier], shape[1:]), 0))
    tiled.set_shape(tf.TensorShape([None if batch is None else batch * multiplier]).concatenate(tensor.shape[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    """Each batch entry of every tensor in `t` repeated `multiplier` times in a row ([b, ...] -> [b * m, ...])."""
    flat = tf.nest.flatten(t)
    with tf.compat.v1.name_scope(name, "tile_batch", flat + [multiplier]):
        return tf.nest.map_structure(lambda tensor: _tile_one(tensor, multiplier), t)


def hardmax(logits, name=None):
    """One-hot of the argmax of the last axis, in the logits' dtype."""
    with tf.compat.v1.name_scope(name, "Hardmax", [logits]):
        logits = tf.convert_to_tensor(logits, name="logits")
        depth = tf.compat.dimension_value(logits.shape[-1])
        if depth is None:
            depth = tf.shape(logits)[-1]
        return tf.one_hot(tf.argmax(logits, -1), depth, dtype=logits.dtype)


def _weighted_mean(values, weights, axis=None):
    return tf.math.divide_no_nan(tf.reduce_sum(values, axis=axis), tf.reduce_sum(weights, axis=axis))


def _mean_over_nonzero(values, weights, axis=None):
    count = tf.cast(tf.math.count_nonzero(weights, axis=axis), values.dtype)
    return tf.math.divide_no_nan(tf.reduce_sum(values, axis=axis), count)


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  sum_over_timesteps=False, sum_over_batch=False, softmax_loss_function=None, name=None):
    """Weighted cross-entropy of [batch, time, classes] logits against [batch, time] targets, averaged (by the
    weights) or summed (over the non-zero weights) across time and/or batch, as TF 1.15's."""
    for tensor, rank, what in ((logits, 3, "Logits must be a [batch_size x sequence_length x logits] tensor"),
                               (targets, 2, "Targets must be a [batch_size x sequence_length] tensor"),
                               (weights, 2, "Weights must be a [batch_size x sequence_length] tensor")):
        if len(tensor.get_shape()) != rank:
            raise ValueError(f"sequence_loss: {what}, got shape {tensor.get_shape()}")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at same time.")
    with tf.compat.v1.name_scope(name, "sequence_loss", [logits, targets, weights]):
        logits_flat = tf.reshape(logits, [-1, tf.shape(logits)[2]])
        targets_flat = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets_flat, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets_flat, logits=logits_flat)
        crossent *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return _weighted_mean(crossent, weights)
        if sum_over_timesteps and sum_over_batch:
            return _mean_over_nonzero(crossent, weights)
        crossent = tf.reshape(crossent, tf.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            return _weighted_mean(crossent, weights, [0] if average_across_batch else [1])
        if sum_over_timesteps or sum_over_batch:
            return _mean_over_nonzero(crossent, weights, [0] if sum_over_batch else [1])
        return crossent


__getattr__ = removed.module_getattr(__name__)
