"""`npu_rnn.npu_dynamic_rnn`: the adapter's replacement for tf.nn.dynamic_rnn.

The NPU compiles whole graphs and handles a while loop poorly, so the adapter unrolls the recurrence: the
time-major `inputs` [time, batch, depth] are split along time, run through tf.nn.static_rnn and stacked again.
The unrolled graph is what the precision pass sees on the NPU, so it is what is built here too.
"""
import tensorflow.compat.v1 as tf


def npu_dynamic_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """(outputs [time, batch, cell.output_size], final state) of `cell` over time-major `inputs`."""
    steps = tf.unstack(inputs, axis=0)
    outputs, state = tf.nn.static_rnn(cell, steps, initial_state=initial_state, dtype=dtype,
                                      sequence_length=sequence_length, scope=scope)
    return tf.stack(outputs, axis=0), state
