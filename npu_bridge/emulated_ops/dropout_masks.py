"""DropOutGenMask / DropOutDoMask (and their V3): the NPU's dropout as a random mask and its application.

DropOutGenMask(shape, prob) draws one keep bit per element (kept with probability `prob`) and packs them eight to
a byte, least significant bit first, padded to a multiple of 128 bits: a uint8 vector of ceil(n / 128) * 16
bytes. DropOutDoMask(x, mask, keep_prob) keeps the elements whose bit is set and scales them by 1 / keep_prob.

The V3 pair spends one byte per element. For a shape [..., M, N] with M and N multiples of 16 the mask is in the
NPU's fractal layout [..., N / 16, M / 16, 16, 16] (element (m, n) at [n // 16, m // 16, m % 16, n % 16]);
otherwise it is a vector padded to a multiple of 16. DropOutDoMaskV3 reads the mask back in x's layout.

seed and seed2 are the ops' attributes: both 0 draws a new mask each run; otherwise the draw is repeatable.
"""
import numpy as np
import tensorflow.compat.v1 as tf

_FRACTAL = 16
_BIT_WEIGHTS = np.array([1 << bit for bit in range(8)], np.int32)


def _keep_draws(count, prob, seed, seed2):
    uniform = tf.raw_ops.RandomUniform(shape=tf.reshape(count, [1]), dtype=tf.float32, seed=seed, seed2=seed2)
    return uniform < tf.cast(prob, tf.float32)


def _element_count(shape):
    return tf.reduce_prod(tf.cast(shape, tf.int64))


def _round_up(count, multiple):
    return (count + multiple - 1) // multiple * multiple


def drop_out_gen_mask(shape, prob, seed=0, seed2=0, name=None):
    """The packed keep-bit mask of a tensor of `shape`: uint8 [ceil(n / 128) * 16]."""
    with tf.name_scope(name, "DropOutGenMask", [shape, prob]):
        padded = _round_up(_element_count(shape), 128)
        bits = tf.cast(_keep_draws(padded, prob, seed, seed2), tf.int32)
        packed = tf.reduce_sum(tf.reshape(bits, [-1, 8]) * _BIT_WEIGHTS, axis=1)
        return tf.cast(packed, tf.uint8)


def _apply(x, keep, keep_prob):
    x = tf.convert_to_tensor(x)
    keep_prob = tf.cast(keep_prob, x.dtype)
    return x * tf.cast(keep, x.dtype) * tf.reciprocal(keep_prob)


def drop_out_do_mask(x, mask, keep_prob, name=None):
    """x * bit / keep_prob, with each element's bit read from DropOutGenMask's packed mask."""
    with tf.name_scope(name, "DropOutDoMask", [x, mask, keep_prob]):
        x = tf.convert_to_tensor(x, name="x")
        shifts = tf.range(8, dtype=tf.int32)
        bits = tf.bitwise.bitwise_and(tf.bitwise.right_shift(tf.cast(mask, tf.int32)[:, None], shifts), 1)
        keep = tf.reshape(tf.reshape(bits, [-1])[:tf.size(x)], tf.shape(x))
        return _apply(x, keep, keep_prob)


def _fractal_dims(shape):
    """The static [..., M, N] of a mask in the fractal layout, or None for the vector layout."""
    dims = tf.get_static_value(shape)
    if dims is None or len(dims) < 2 or dims[-1] % _FRACTAL or dims[-2] % _FRACTAL:
        return None
    return [int(d) for d in dims]


def drop_out_gen_mask_v3(shape, prob, seed=0, seed2=0, name=None):
    """One keep byte (0 or 1) per element of a tensor of `shape`, in the layout the module docstring describes."""
    with tf.name_scope(name, "DropOutGenMaskV3", [shape, prob]):
        dims = _fractal_dims(shape)
        count = _element_count(shape)
        if dims is None:
            return tf.cast(_keep_draws(_round_up(count, _FRACTAL), prob, seed, seed2), tf.uint8)
        *batch, rows, cols = dims
        keep = tf.reshape(_keep_draws(count, prob, seed, seed2),
                          [*batch, rows // _FRACTAL, _FRACTAL, cols // _FRACTAL, _FRACTAL])
        rank = len(dims) + 2
        fractal = tf.transpose(keep, [*range(len(batch)), rank - 2, rank - 4, rank - 3, rank - 1])
        return tf.cast(fractal, tf.uint8)


def drop_out_do_mask_v3(x, mask, keep_prob, name=None):
    """x * byte / keep_prob, with the bytes of DropOutGenMaskV3's mask read back in x's layout."""
    with tf.name_scope(name, "DropOutDoMaskV3", [x, mask, keep_prob]):
        x = tf.convert_to_tensor(x, name="x")
        mask = tf.convert_to_tensor(mask)
        if mask.shape.ndims is not None and x.shape.ndims is not None and mask.shape.ndims == x.shape.ndims + 2:
            rank = mask.shape.ndims
            batch = list(range(rank - 4))
            keep = tf.reshape(tf.transpose(mask, [*batch, rank - 3, rank - 2, rank - 4, rank - 1]), tf.shape(x))
        else:
            keep = tf.reshape(tf.reshape(mask, [-1])[:tf.size(x)], tf.shape(x))
        return _apply(x, keep, keep_prob)
