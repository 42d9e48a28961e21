"""contrib.image's YIQ colour distortions: rotate the hue in YIQ space and scale saturation and value.

TF 1.15 ran a custom kernel (AdjustHsvInYiq) that TF 2 does not ship; the same linear map is one matmul with the
3x3 matrix YIQ * HSV-scale * YIQ^-1, applied to the last axis."""
import math

import tensorflow as tf

_RGB_TO_YIQ = [[0.299, 0.596, 0.211], [0.587, -0.274, -0.523], [0.114, -0.322, 0.312]]
_YIQ_TO_RGB = [[1.0, 1.0, 1.0], [0.95617069, -0.2726886, -1.103744], [0.62143257, -0.64681324, 1.70062309]]


def adjust_hsv_in_yiq(image, delta_hue=0, scale_saturation=1, scale_value=1, name=None):
    """`image` (RGB on its last axis) with its hue rotated by delta_hue radians and saturation and value scaled."""
    with tf.compat.v1.name_scope(name, "adjust_hsv_in_yiq", [image]):
        image = tf.convert_to_tensor(image, name="image")
        original_dtype = image.dtype
        flt = tf.image.convert_image_dtype(image, tf.float32)
        delta_hue = tf.cast(delta_hue, tf.float32, name="delta_hue")
        scale_saturation = tf.cast(scale_saturation, tf.float32, name="scale_saturation")
        scale_value = tf.cast(scale_value, tf.float32, name="scale_value")
        vsu = scale_value * scale_saturation * tf.cos(delta_hue)
        vsw = scale_value * scale_saturation * tf.sin(delta_hue)
        zero = tf.zeros_like(vsu)
        hsv = tf.stack([tf.stack([scale_value, zero, zero]), tf.stack([zero, vsu, vsw]),
                        tf.stack([zero, -vsw, vsu])])
        matrix = tf.matmul(tf.matmul(tf.constant(_RGB_TO_YIQ), hsv), tf.constant(_YIQ_TO_RGB))
        shape = tf.shape(flt)
        adjusted = tf.reshape(tf.matmul(tf.reshape(flt, [-1, 3]), matrix), shape)
        return tf.image.convert_image_dtype(adjusted, original_dtype)


def random_hsv_in_yiq(image, max_delta_hue=0, lower_saturation=1, upper_saturation=1, lower_value=1,
                      upper_value=1, seed=None):
    """adjust_hsv_in_yiq with a hue delta uniform in [-max_delta_hue, max_delta_hue] and saturation and value
    scales uniform in their [lower, upper] ranges."""
    if max_delta_hue < 0:
        raise ValueError(f"random_hsv_in_yiq: max_delta_hue must be non-negative, got {max_delta_hue}")
    if not 0 <= lower_saturation <= upper_saturation:
        raise ValueError("random_hsv_in_yiq: need 0 <= lower_saturation <= upper_saturation, got "
                         f"{lower_saturation}, {upper_saturation}")
    if not 0 <= lower_value <= upper_value:
        raise ValueError(f"random_hsv_in_yiq: need 0 <= lower_value <= upper_value, got {lower_value}, {upper_value}")
    max_delta_hue = min(max_delta_hue, math.pi)
    delta_hue = tf.random.uniform([], -max_delta_hue, max_delta_hue, seed=seed)
    scale_saturation = upper_saturation if lower_saturation == upper_saturation else \
        tf.random.uniform([], lower_saturation, upper_saturation, seed=seed)
    scale_value = upper_value if lower_value == upper_value else \
        tf.random.uniform([], lower_value, upper_value, seed=seed)
    return adjust_hsv_in_yiq(image, delta_hue, scale_saturation, scale_value)
