"""tf.contrib.distributions: the distributions TF 1.15 moved to tf.distributions, which tf.compat.v1 keeps
(tensorflow_probability has the rest), and percentile."""
from tensorflow.python.ops.distributions.bernoulli import Bernoulli  # noqa: F401
from tensorflow.python.ops.distributions.beta import Beta  # noqa: F401
from tensorflow.python.ops.distributions.categorical import Categorical  # noqa: F401
from tensorflow.python.ops.distributions.dirichlet import Dirichlet  # noqa: F401
from tensorflow.python.ops.distributions.distribution import (  # noqa: F401
    Distribution,
    ReparameterizationType,
)
from tensorflow.python.ops.distributions.exponential import Exponential  # noqa: F401
from tensorflow.python.ops.distributions.gamma import Gamma  # noqa: F401
from tensorflow.python.ops.distributions.kullback_leibler import kl_divergence  # noqa: F401
from tensorflow.python.ops.distributions.laplace import Laplace  # noqa: F401
from tensorflow.python.ops.distributions.multinomial import Multinomial  # noqa: F401
from tensorflow.python.ops.distributions.normal import Normal  # noqa: F401
from tensorflow.python.ops.distributions.student_t import StudentT  # noqa: F401
from tensorflow.python.ops.distributions.uniform import Uniform  # noqa: F401

import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


_PERCENTILE_ROUNDING = {"lower": tf.math.ceil, "higher": tf.math.floor, "nearest": tf.math.round}


def percentile(x, q, axis=None, interpolation=None, keep_dims=False, validate_args=False, name=None):
    """TF 1.15's q-th percentile of x over `axis` (all axes when None), with no interpolation between values:
    `interpolation` picks the "lower", "higher" or "nearest" (the default) of the two neighbouring values, found
    in the values sorted high to low as TF 1.15 did (so "nearest" rounds ties as tf.math.round does)."""
    del validate_args       # q is not checked against [0, 100] here either: it is clipped to the values' range
    interpolation = interpolation or "nearest"
    if interpolation not in _PERCENTILE_ROUNDING:
        raise ValueError(f"tf.contrib.distributions.percentile: interpolation must be one of "
                         f"{sorted(_PERCENTILE_ROUNDING)}, got {interpolation!r}")
    with tf.name_scope(name or "percentile"):
        x = tf.convert_to_tensor(x, name="x")
        rank = x.shape.rank
        if rank is None:
            raise ValueError("tf.contrib.distributions.percentile needs x of known rank")
        axes = range(rank) if axis is None else (axis if isinstance(axis, (list, tuple)) else [axis])
        axes = sorted({int(a) % rank for a in axes}) if rank else []
        kept = [d for d in range(rank) if d not in axes]
        y = tf.transpose(x, kept + axes)
        y = tf.reshape(y, tf.concat([tf.shape(y)[:len(kept)], [-1]], 0))
        count = tf.shape(y)[-1]
        descending = tf.math.top_k(y, k=count).values
        position = tf.cast(count - 1, tf.float64) * (1.0 - tf.cast(q, tf.float64) / 100.0)
        index = tf.clip_by_value(tf.cast(_PERCENTILE_ROUNDING[interpolation](position), tf.int32), 0, count - 1)
        result = tf.gather(descending, index, axis=-1)
        for reduced in axes if keep_dims else ():
            result = tf.expand_dims(result, reduced)
        return result


__getattr__ = removed.module_getattr(__name__)
