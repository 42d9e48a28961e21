"""contrib.image.dense_image_warp: TF 1.15's bilinear warp of images by a dense flow field.

Output pixel (b, y, x) is the input image sampled at (y - flow[b, y, x, 0], x - flow[b, y, x, 1]), interpolated
bilinearly between the four pixels around that point. As in TF 1.15 the corner indices are clamped so that the
lower corner lies in [0, size - 2] and the interpolation weights in [0, 1]: points outside the image take the
value of the nearest edge, and images need at least 2 rows and 2 columns. Built from ordinary ops (Floor, Gather,
arithmetic), which is also what TF 1.15 built.
"""
import tensorflow as tf


def _corner_and_weight(coordinates, size, image_dtype):
    """The lower corner index (int32, clamped to [0, size - 2]) and the weight of the upper corner (clamped to
    [0, 1], in the image's dtype) along one axis."""
    lowest = tf.cast(size - 2, coordinates.dtype)
    corner = tf.minimum(tf.maximum(tf.constant(0.0, coordinates.dtype), tf.floor(coordinates)), lowest)
    weight = tf.clip_by_value(tf.cast(coordinates - corner, image_dtype), 0.0, 1.0)
    return tf.cast(corner, tf.int32), weight[:, :, None]


def interpolate_bilinear(grid, query_points, name="interpolate_bilinear", indexing="ij"):
    """Sample grid [batch, height, width, channels] at query_points [batch, n, 2] ((y, x) for indexing "ij",
    (x, y) for "xy"), bilinearly; returns [batch, n, channels]."""
    if indexing not in ("ij", "xy"):
        raise ValueError(f"interpolate_bilinear: indexing must be 'ij' or 'xy', got {indexing!r}")
    with tf.compat.v1.name_scope(name):
        grid = tf.convert_to_tensor(grid)
        query_points = tf.convert_to_tensor(query_points)
        if grid.get_shape().ndims != 4:
            raise ValueError(f"interpolate_bilinear: the grid must be 4-dimensional, got shape {grid.get_shape()}")
        if query_points.get_shape().ndims != 3:
            raise ValueError(f"interpolate_bilinear: query_points must be [batch, n, 2], got shape "
                             f"{query_points.get_shape()}")
        for axis, label in ((1, "height"), (2, "width")):
            static = grid.get_shape()[axis]
            if static is not None and static < 2:
                raise ValueError(f"interpolate_bilinear: the grid's {label} must be at least 2, got {static}")
        batch, height, width, channels = tf.unstack(tf.shape(grid))
        queries = tf.unstack(query_points, axis=2)
        y_queries, x_queries = queries if indexing == "ij" else queries[::-1]
        top, y_weight = _corner_and_weight(y_queries, height, grid.dtype)
        left, x_weight = _corner_and_weight(x_queries, width, grid.dtype)
        pixels = tf.reshape(grid, [batch * height * width, channels])
        batch_offsets = tf.reshape(tf.range(batch) * height * width, [batch, 1])
        count = tf.shape(query_points)[1]

        def corner(rows, columns):
            values = tf.gather(pixels, batch_offsets + rows * width + columns)
            return tf.reshape(values, [batch, count, channels])

        top_left, top_right = corner(top, left), corner(top, left + 1)
        bottom_left, bottom_right = corner(top + 1, left), corner(top + 1, left + 1)
        upper = x_weight * (top_right - top_left) + top_left
        lower = x_weight * (bottom_right - bottom_left) + bottom_left
        return y_weight * (lower - upper) + upper


def dense_image_warp(image, flow, name="dense_image_warp"):
    """Warp image [batch, height, width, channels] by flow [batch, height, width, 2] (see the module)."""
    with tf.compat.v1.name_scope(name):
        image = tf.convert_to_tensor(image)
        flow = tf.convert_to_tensor(flow)
        batch, height, width, channels = tf.unstack(tf.shape(image))
        grid_x, grid_y = tf.meshgrid(tf.range(width), tf.range(height))
        grid = tf.cast(tf.stack([grid_y, grid_x], axis=2), flow.dtype)[None]
        query_points = tf.reshape(grid - flow, [batch, height * width, 2])
        warped = interpolate_bilinear(image, query_points)
        return tf.reshape(warped, [batch, height, width, channels])
