"""RandomChoiceWithMask: the AI CPU op that samples positions of a bool tensor's True elements.

It returns `count` coordinates [count, rank] (int32) of True elements chosen at random without replacement, and a
bool [count] mask saying which rows are real: when fewer than `count` elements are True, the rest are zero rows
with mask False. seed and seed2 are the op's attributes (both 0: a new draw each run).
"""
import tensorflow.compat.v1 as tf


def random_choice_with_mask(x, count=256, seed=0, seed2=0, name=None):
    """(y, mask): see the module docstring."""
    with tf.name_scope(name, "RandomChoiceWithMask", [x]):
        x = tf.convert_to_tensor(x, name="x")
        if x.dtype != tf.bool:
            raise TypeError(f"randomchoicewithmask: x must be a bool tensor, got {x.dtype.name}")
        if x.shape.ndims is None:
            raise ValueError("randomchoicewithmask: x must have a known rank")
        count = int(count)
        if count <= 0:
            raise ValueError(f"randomchoicewithmask: count must be positive, got {count}")
        coordinates = tf.cast(tf.where(x), tf.int32)
        order = tf.argsort(tf.raw_ops.RandomUniform(shape=tf.shape(coordinates)[:1], dtype=tf.float32, seed=seed,
                                                    seed2=seed2))
        chosen = tf.gather(coordinates, order)[:count]
        found = tf.shape(chosen)[0]
        y = tf.pad(chosen, [[0, count - found], [0, 0]])
        y.set_shape([count, x.shape.ndims])
        mask = tf.range(count) < found
        return y, mask
