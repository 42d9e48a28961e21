"""Session hooks of the real adapter for a one-rank job."""
import tensorflow.compat.v1 as tf

from npu_bridge.hccl.rank import check_single_rank


class NPUBroadcastGlobalVariablesHook(tf.train.SessionRunHook):
    """Broadcasts rank root_rank's initial variables to every rank; with one rank there is nothing to send."""

    def __init__(self, root_rank=None, index=None):
        check_single_rank("NPUBroadcastGlobalVariablesHook")
        super().__init__()
        self.root_rank = root_rank
        self.index = index
