"""tf.contrib.learn: the names of it ported scripts still use, ModeKeys and RunConfig.

ModeKeys keeps contrib.learn's values ("train", "eval", "infer"), which are tf.estimator.ModeKeys' too, so a mode
compared against either matches; RunConfig is tf.compat.v1.estimator's, looked up when called.
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


class ModeKeys:
    """The mode a model_fn builds for (contrib.learn spelt PREDICT as INFER)."""
    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
INFER = ModeKeys.INFER


def RunConfig(*args, **kwargs):
    """tf.compat.v1.estimator.RunConfig (contrib.learn's RunConfig took the same arguments)."""
    estimator = getattr(tf.compat.v1, "estimator", None)
    if estimator is None:
        raise ImportError("tf.contrib.learn.RunConfig is tf.compat.v1.estimator.RunConfig, and this TensorFlow has "
                          "no Estimator: run the script under npu-run, which provides one")
    return estimator.RunConfig(*args, **kwargs)


__getattr__ = removed.module_getattr(__name__)
