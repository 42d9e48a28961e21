"""tf.contrib.crf: a linear-chain conditional random field's likelihood and Viterbi decoding, as TF 1.15 had them.

Sequences are batch-major ([batch, time, num_tags] scores, [batch, time] tags) and padded: only the first
sequence_lengths[b] steps count, a length of 0 scores 0, and crf_decode gives tag 0 past each length. The time loops
are tf.scan over time-major copies, so the graph works for any (even unknown) maximum length. crf_log_likelihood
creates TF 1.15's `transitions` variable when no transition matrix is passed, so its checkpoints restore.
"""
import numpy as np
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

v1 = tf.compat.v1


def _time_major(tensor):
    return tf.transpose(tensor, [1, 0, 2])


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """Sum over each sequence's steps of the score of its tag: [batch]."""
    tag_indices = tf.cast(tag_indices, tf.int32)
    picked = tf.squeeze(tf.gather(inputs, tag_indices[:, :, None], batch_dims=2), 2)
    mask = tf.sequence_mask(sequence_lengths, tf.shape(inputs)[1], dtype=inputs.dtype)
    return tf.reduce_sum(picked * mask, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """Sum over each sequence's consecutive tag pairs of their transition score: [batch]."""
    tag_indices = tf.cast(tag_indices, tf.int32)
    pairs = tf.stack([tag_indices[:, :-1], tag_indices[:, 1:]], axis=2)
    scores = tf.gather_nd(transition_params, pairs)
    mask = tf.sequence_mask(sequence_lengths, tf.shape(tag_indices)[1], dtype=transition_params.dtype)[:, 1:]
    return tf.reduce_sum(scores * mask, 1)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalised score of each tag sequence: unary plus binary scores, [batch]."""
    return (crf_unary_score(tag_indices, sequence_lengths, inputs)
            + crf_binary_score(tag_indices, sequence_lengths, transition_params))


def _steps(inputs, sequence_lengths):
    """(scores of steps 1.., whether each step is inside its sequence), time-major, for the scans."""
    later = _time_major(inputs[:, 1:])
    times = tf.range(1, tf.shape(inputs)[1])
    active = tf.less(times[:, None], tf.cast(sequence_lengths, tf.int32)[None, :])
    return later, active


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """log of the partition function (the forward algorithm) of each sequence, [batch]; 0 for a length of 0."""
    later, active = _steps(inputs, sequence_lengths)

    def forward(alphas, step):
        scores, inside = step
        new = tf.reduce_logsumexp(alphas[:, :, None] + transition_params[None], axis=1) + scores
        return tf.where(inside[:, None], new, alphas)

    final = tf.foldl(forward, (later, active), initializer=inputs[:, 0])
    log_norm = tf.reduce_logsumexp(final, axis=1)
    return tf.where(tf.less_equal(sequence_lengths, 0), tf.zeros_like(log_norm), log_norm)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """(log-likelihood of each tag sequence [batch], the transition matrix [num_tags, num_tags]); without a matrix,
    the variable `transitions` in the current variable scope."""
    num_tags = inputs.get_shape()[2]
    if transition_params is None:
        transition_params = v1.get_variable("transitions", [num_tags, num_tags])
    sequence_scores = crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
    return sequence_scores - crf_log_norm(inputs, sequence_lengths, transition_params), transition_params


def viterbi_decode(score, transition_params):
    """The best tag sequence of one unpadded sequence, in numpy: (list of tag ids, its score as a float)."""
    score = np.asarray(score)
    transition_params = np.asarray(transition_params)
    trellis = np.zeros_like(score)
    backpointers = np.zeros_like(score, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        candidates = trellis[t - 1][:, None] + transition_params
        trellis[t] = score[t] + np.max(candidates, 0)
        backpointers[t] = np.argmax(candidates, 0)
    best = [int(np.argmax(trellis[-1]))]
    for pointers in backpointers[:0:-1]:
        best.append(int(pointers[best[-1]]))
    best.reverse()
    return best, float(np.max(trellis[-1]))


def crf_decode(potentials, transition_params, sequence_length):
    """The best tag sequence of each padded sequence in the graph: (tags [batch, time] int32, 0 past each length;
    their scores [batch])."""
    later, active = _steps(potentials, sequence_length)
    num_tags = tf.shape(potentials)[2]

    def forward(carry, step):
        state, _ = carry
        scores, inside = step
        candidates = state[:, :, None] + transition_params[None]
        new = tf.reduce_max(candidates, axis=1) + scores
        pointers = tf.cast(tf.argmax(candidates, axis=1), tf.int32)
        return tf.where(inside[:, None], new, state), pointers

    first = potentials[:, 0]
    no_pointers = tf.zeros(tf.stack([tf.shape(potentials)[0], num_tags]), tf.int32)
    states, pointers = tf.scan(forward, (later, active), initializer=(first, no_pointers))
    last_state = tf.concat([first[None], states], 0)[-1]
    pointers = tf.concat([no_pointers[None], pointers], 0)
    lengths = tf.cast(sequence_length, tf.int32)
    positions = tf.range(tf.shape(potentials)[1])

    def backward(carry, step):
        tag, _ = carry
        position, step_pointers = step
        inside = tf.less(position, lengths)
        out = tf.where(inside, tag, tf.zeros_like(tag))
        previous = tf.squeeze(tf.gather(step_pointers, tag[:, None], batch_dims=1), 1)
        return tf.where(inside & tf.greater(position, 0), previous, tag), out

    last_tag = tf.cast(tf.argmax(last_state, axis=1), tf.int32)
    _, tags = tf.scan(backward, (positions, pointers), initializer=(last_tag, tf.zeros_like(last_tag)),
                      reverse=True)
    return tf.transpose(tags), tf.reduce_max(last_state, axis=1)


__getattr__ = removed.module_getattr(__name__)
