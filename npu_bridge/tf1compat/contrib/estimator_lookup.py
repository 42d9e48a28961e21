"""The Estimator the contrib names built on it (tpu.TPUEstimator, tpu.RunConfig, learn.RunConfig) use, looked up
when they are called: TensorFlow's own on 2.15, npu_bridge's (tf1compat.estimator) on newer TensorFlow once
tf1compat.install() has run."""
import importlib

import tensorflow as tf


def estimator_module(caller):
    """tf.compat.v1.estimator as it is now, or an ImportError naming `caller` where there is none."""
    estimator = getattr(tf.compat.v1, "estimator", None)
    if estimator is None:       # a tf.compat.v1 rebuilt after tf1compat.install() named npu_bridge's Estimator
        try:
            estimator = importlib.import_module("tensorflow.compat.v1.estimator")
        except ImportError:
            estimator = None
    if estimator is None:
        raise ImportError(f"tf.contrib.{caller} runs on tf.compat.v1.estimator, and this TensorFlow "
                          f"({tf.__version__}) has no Estimator: run the script under npu-run, which provides one")
    return estimator
