"""contrib.image's projective transforms: each transform is 8 numbers [a0, a1, a2, b0, b1, b2, c0, c1] mapping an
output pixel (x, y) to the input point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1;
pixels mapped outside the image are 0. Built on ImageProjectiveTransformV2, the op TF 1.15 used."""
import tensorflow as tf
from tensorflow.python.ops import gen_image_ops

_IMAGE_DTYPES = (tf.uint8, tf.int32, tf.int64, tf.float16, tf.float32, tf.float64)


def _as_batch(images):
    """The images as [batch, height, width, channels] and a function giving a result back the caller's rank."""
    rank = images.get_shape().ndims
    if rank is None:
        raise TypeError(f"{images.name}: the images' rank must be statically known")
    if rank == 2:
        return images[None, :, :, None], lambda output: output[0, :, :, 0]
    if rank == 3:
        return images[None, :, :, :], lambda output: output[0, :, :, :]
    if rank == 4:
        return images, lambda output: output
    raise TypeError(f"{images.name}: images should have rank between 2 and 4, got {rank}")


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """Apply one transform (8 numbers) or one per image ([batch, 8]); interpolation NEAREST or BILINEAR."""
    with tf.compat.v1.name_scope(name, "transform"):
        images = tf.convert_to_tensor(images, name="images")
        transforms = tf.convert_to_tensor(transforms, name="transforms", dtype=tf.float32)
        if images.dtype.base_dtype not in _IMAGE_DTYPES:
            raise TypeError(f"transform: invalid image dtype {images.dtype.name}")
        batch, restore = _as_batch(images)
        if output_shape is None:
            output_shape = tf.shape(batch)[1:3]
        output_shape = tf.convert_to_tensor(output_shape, tf.int32, name="output_shape")
        if transforms.get_shape().ndims == 1:
            transforms = transforms[None]
        elif transforms.get_shape().ndims != 2:
            raise TypeError(f"transform: transforms should have rank 1 or 2, got {transforms.get_shape()}")
        output = gen_image_ops.image_projective_transform_v2(
            batch, output_shape=output_shape, transforms=transforms, interpolation=interpolation.upper())
        return restore(output)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """The transforms rotating images of that size counterclockwise by `angles` (radians) about their centre."""
    with tf.compat.v1.name_scope(name, "angles_to_projective_transforms"):
        angles = tf.convert_to_tensor(angles, name="angles", dtype=tf.float32)
        if angles.get_shape().ndims == 0:
            angles = angles[None]
        elif angles.get_shape().ndims != 1:
            raise TypeError(f"rotate: angles should have rank 0 or 1, got {angles.get_shape()}")
        cos, sin = tf.cos(angles), tf.sin(angles)
        x_offset = ((image_width - 1) - (cos * (image_width - 1) - sin * (image_height - 1))) / 2.0
        y_offset = ((image_height - 1) - (sin * (image_width - 1) + cos * (image_height - 1))) / 2.0
        count = tf.shape(angles)[0]
        return tf.concat([cos[:, None], -sin[:, None], x_offset[:, None], sin[:, None], cos[:, None],
                          y_offset[:, None], tf.zeros((count, 2), tf.float32)], axis=1)


def rotate(images, angles, interpolation="NEAREST", name=None):
    """Rotate images counterclockwise by `angles` radians (one, or one per image); corners outside are 0."""
    with tf.compat.v1.name_scope(name, "rotate"):
        images = tf.convert_to_tensor(images, name="images")
        batch, restore = _as_batch(images)
        height = tf.cast(tf.shape(batch)[1], tf.float32)[None]
        width = tf.cast(tf.shape(batch)[2], tf.float32)[None]
        return restore(transform(batch, angles_to_projective_transforms(angles, height, width),
                                 interpolation=interpolation))


def translations_to_projective_transforms(translations, name=None):
    """The transforms shifting images by [dx, dy] (one, or one per image)."""
    with tf.compat.v1.name_scope(name, "translations_to_projective_transforms"):
        translations = tf.convert_to_tensor(translations, name="translations", dtype=tf.float32)
        if translations.get_shape().ndims == 1:
            translations = translations[None]
        elif translations.get_shape().ndims != 2:
            raise TypeError(f"translate: translations should have rank 1 or 2, got {translations.get_shape()}")
        count = tf.shape(translations)[0]
        ones, zeros = tf.ones((count, 1), tf.float32), tf.zeros((count, 1), tf.float32)
        return tf.concat([ones, zeros, -translations[:, 0, None], zeros, ones, -translations[:, 1, None],
                          tf.zeros((count, 2), tf.float32)], axis=1)


def translate(images, translations, interpolation="NEAREST", name=None):
    """Shift images by [dx, dy] pixels; uncovered pixels are 0."""
    with tf.compat.v1.name_scope(name, "translate"):
        return transform(images, translations_to_projective_transforms(translations), interpolation=interpolation)


def flat_transforms_to_matrices(transforms):
    """[N, 8] transforms as [N, 3, 3] matrices."""
    transforms = tf.reshape(transforms, [-1, 8])
    count = tf.shape(transforms)[0]
    return tf.reshape(tf.concat([transforms, tf.ones([count, 1])], axis=1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices):
    """[N, 3, 3] matrices as [N, 8] transforms (normalised so the last entry is 1)."""
    matrices = tf.reshape(transform_matrices, [-1, 9])
    return (matrices / matrices[:, 8:9])[:, :8]


def compose_transforms(*transforms):
    """One transform doing the given ones right to left (as their matrices multiply)."""
    composed = flat_transforms_to_matrices(transforms[0])
    for following in transforms[1:]:
        composed = tf.matmul(composed, flat_transforms_to_matrices(following))
    return matrices_to_flat_transforms(composed)
