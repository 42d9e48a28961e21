"""tf.contrib.resampler: TF 1.15's bilinear resampler, on TensorFlow 2's public gather ops.

`resampler(data, warp)` samples `data` ([batch, height, width, channels]) at the points `warp` ([batch, ..., 2],
each an (x, y) pair: x along the width) by bilinear interpolation of the four pixels around each point; a pixel
outside the image counts as zero, as in TF 1.15's kernel, so points beyond the border fade to zero.
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


def resampler(data, warp, name="resampler"):
    """`data` resampled at the points of `warp` (see the module docstring): [batch, ..., channels]."""
    with tf.name_scope(name):
        data = tf.convert_to_tensor(data, name="data")
        warp = tf.cast(tf.convert_to_tensor(warp, name="warp"), data.dtype)
        x, y = warp[..., 0], warp[..., 1]
        x0, y0 = tf.floor(x), tf.floor(y)
        height, width = tf.shape(data)[1], tf.shape(data)[2]
        batch_shape = tf.concat([tf.shape(x)[:1], tf.ones_like(tf.shape(x)[1:])], axis=0)
        batch_index = tf.broadcast_to(tf.reshape(tf.range(tf.shape(x)[0]), batch_shape), tf.shape(x))

        def corner(xc, yc):
            inside = (xc >= 0) & (yc >= 0) & (xc <= tf.cast(width - 1, data.dtype)) & \
                (yc <= tf.cast(height - 1, data.dtype))
            column = tf.clip_by_value(tf.cast(xc, tf.int32), 0, width - 1)
            row = tf.clip_by_value(tf.cast(yc, tf.int32), 0, height - 1)
            values = tf.gather_nd(data, tf.stack([batch_index, row, column], axis=-1))
            return values * tf.cast(inside, data.dtype)[..., None]

        wx, wy = (x - x0)[..., None], (y - y0)[..., None]
        return ((1 - wx) * (1 - wy) * corner(x0, y0) + wx * (1 - wy) * corner(x0 + 1, y0) +
                (1 - wx) * wy * corner(x0, y0 + 1) + wx * wy * corner(x0 + 1, y0 + 1))


__getattr__ = removed.module_getattr(__name__)
