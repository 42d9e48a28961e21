"""Keras callbacks of the real adapter for a one-rank job."""
import importlib

import tensorflow.compat.v1 as tf

from npu_bridge.hccl.rank import check_single_rank


def keras_v1():
    """The Keras 2 API TF1 Keras code uses: tf_keras's v1 API on TF >= 2.16, the bundled tf.keras on 2.15."""
    major, minor = (int(part) for part in tf.__version__.split(".")[:2])
    if (major, minor) < (2, 16):
        return tf.keras
    return importlib.import_module("tf_keras.api._v1.keras")


def NPUBroadcastGlobalVariablesCallback(root_rank):
    """The callback that broadcasts rank `root_rank`'s initial variables to every rank. With one rank there is
    nothing to send, so it is a Keras callback that does nothing (made on first use, so importing npu_init does
    not load Keras)."""
    check_single_rank("NPUBroadcastGlobalVariablesCallback")
    if root_rank != 0:
        raise ValueError(f"NPUBroadcastGlobalVariablesCallback: root_rank {root_rank} does not exist in a one-rank "
                         "job (only rank 0)")
    return keras_v1().callbacks.Callback()
