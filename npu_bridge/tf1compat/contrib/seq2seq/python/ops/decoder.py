"""tensorflow.contrib.seq2seq.python.ops.decoder: TF 1.15's module path for the names it held, and the private
_transpose_batch_time that ports' own helpers (NMT_ID0512's static_utils/helper.py) take from it."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib.seq2seq.decoder import Decoder, dynamic_decode  # noqa: F401


def _transpose_batch_time(x):
    """`x` with its first two dimensions swapped ([batch, time, ...] <-> [time, batch, ...]), its static shape kept;
    a tensor of static rank below 2 is returned as it is, as TF 1.15's rnn._transpose_batch_time did."""
    static_shape = x.get_shape()
    if static_shape.rank is not None and static_shape.rank < 2:
        return x
    transposed = tf.transpose(x, tf.concat(([1, 0], tf.range(2, tf.rank(x))), axis=0))
    if static_shape.rank is not None:
        transposed.set_shape(tf.TensorShape([static_shape[1], static_shape[0]]).concatenate(static_shape[2:]))
    return transposed
