"""tf.contrib.legacy_seq2seq: TF 1.15's list-of-steps decoder and sequence losses, which older ported seq2seq and
char-RNN scripts use (the time steps are Python lists of [batch, ...] tensors, unrolled in the graph).

rnn_decoder shares one set of cell variables across steps under `rnn_decoder/`, as TF 1.15 did, so its checkpoints
restore; the losses weight each step's cross-entropy and average as TF 1.15 documented.
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

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


__getattr__ = removed.module_getattr(__name__)
