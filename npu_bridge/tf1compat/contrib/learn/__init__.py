"""tf.contrib.learn: the names of it ported scripts still use, ModeKeys and RunConfig.

ModeKeys keeps contrib.learn's values ("train", "eval", "infer"), which are tf.estimator.ModeKeys' too, so a mode
compared against either matches; RunConfig is tf.compat.v1.estimator's, looked up when called.
"""
from npu_bridge.tf1compat.contrib import estimator_lookup, removed


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
    estimator = estimator_lookup.estimator_module("learn.RunConfig")
    return estimator.RunConfig(*args, **kwargs)


__getattr__ = removed.module_getattr(__name__)
