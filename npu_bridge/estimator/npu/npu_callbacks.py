"""Keras callbacks of the real adapter."""
import importlib

import tensorflow.compat.v1 as tf

from npu_bridge.hccl.rank import get_rank_size, members, WORLD_GROUP


def keras_v1():
    """The Keras 2 API TF1 Keras code uses: tf_keras's v1 API on TF >= 2.16, the bundled tf.keras on 2.15."""
    major, minor = (int(part) for part in tf.__version__.split(".")[:2])
    if (major, minor) < (2, 16):
        return tf.keras
    return importlib.import_module("tf_keras.api._v1.keras")


def NPUBroadcastGlobalVariablesCallback(root_rank):
    """The Keras callback that broadcasts rank `root_rank`'s variables to every rank before the first batch, as
    the real one does (nothing to send on one rank). Made on first use, so importing npu_init does not load Keras."""
    if isinstance(root_rank, bool) or not isinstance(root_rank, int) or root_rank not in members(WORLD_GROUP):
        raise ValueError(f"NPUBroadcastGlobalVariablesCallback: root_rank {root_rank!r} does not exist (ranks "
                         f"0..{get_rank_size() - 1})")
    keras = keras_v1()

    class BroadcastGlobalVariablesCallback(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.root_rank = root_rank
            self.broadcast_done = False

        def on_batch_begin(self, batch, logs=None):
            if self.broadcast_done:
                return
            if get_rank_size() > 1:
                from npu_bridge.estimator.npu.npu_hook import broadcast_variables

                session = keras.backend.get_session()
                with session.graph.as_default():
                    session.run(broadcast_variables(tf.global_variables(), self.root_rank))
            self.broadcast_done = True

        on_train_batch_begin = on_batch_begin

    return BroadcastGlobalVariablesCallback()
