"""tf.contrib.recurrent: TF 1.15's functional_rnn and bidirectional_functional_rnn, which TF 1.15 documented as the
same interface as tf.nn.dynamic_rnn / bidirectional_dynamic_rnn, built with functional control flow for TPUs.

On a CPU there is no reason for a second loop: both run on dynamic_rnn, with the same default scopes (`rnn`,
`bidirectional_rnn/fw|bw`) and so the same cell variable names, the same outputs (zeros past each sequence's
length) and final states. use_tpu changes nothing here; fast_reverse (a speed choice in TF 1.15) neither. One
edge differs: for a sequence of length 0 TF 1.15 returned a zero final state, dynamic_rnn the initial state.
Recurrent, the lower-level loop, is not provided (its error names dynamic_rnn).
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

v1 = tf.compat.v1


def _reversed_in_time(inputs, sequence_length, time_major):
    """Each sequence reversed within its length (the whole time axis without sequence_length)."""
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(tensor):
        if sequence_length is None:
            return tf.reverse(tensor, axis=[time_axis])
        return tf.reverse_sequence(tensor, sequence_length, seq_axis=time_axis, batch_axis=batch_axis)

    return tf.nest.map_structure(reverse, inputs)


def functional_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, time_major=False,
                   scope=None, use_tpu=False, reverse=False):
    """dynamic_rnn(cell, inputs, ...): (outputs, final state). With reverse, the cell reads each sequence from
    its last step to its first, and the outputs come back in the inputs' time order."""
    del use_tpu     # a TPU-compatibility switch; nothing to switch on a CPU
    if reverse:
        inputs = _reversed_in_time(inputs, sequence_length, time_major)
    outputs, state = v1.nn.dynamic_rnn(cell, inputs, sequence_length=sequence_length, initial_state=initial_state,
                                       dtype=dtype, time_major=time_major, scope=scope)
    if reverse:
        outputs = _reversed_in_time(outputs, sequence_length, time_major)
    return outputs, state


def bidirectional_functional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None,
                                 dtype=None, sequence_length=None, time_major=False, use_tpu=False,
                                 fast_reverse=False, scope=None):
    """bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, ...): ((output_fw, output_bw), (state_fw, state_bw))."""
    del use_tpu, fast_reverse   # TPU and speed switches of TF 1.15's functional loop; the results are these
    return v1.nn.bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=sequence_length,
                                           initial_state_fw=initial_state_fw, initial_state_bw=initial_state_bw,
                                           dtype=dtype, time_major=time_major, scope=scope)


__getattr__ = removed.module_getattr(__name__)
