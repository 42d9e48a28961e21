"""`npu_strategy.NPUStrategy()`, what the migration tool writes for MirroredStrategy.

The real strategy is a one-device strategy on the host CPU whose dataset is sharded over the HCCL ranks; on one
rank it is exactly TensorFlow's OneDeviceStrategy on "/cpu:0". On N ranks each rank gets that strategy; the
real one's dataset sharding and cross-rank reductions inside the strategy are not reproduced.
"""
import tensorflow.compat.v1 as tf


class NPUStrategy(tf.distribute.OneDeviceStrategy):
    """tf.distribute strategy of the adapter; `device` accepts only "/cpu:0", as the real one."""

    def __init__(self, device="/cpu:0"):
        if device != "/cpu:0":
            raise ValueError(f'NPUStrategy: "device" only supports "/cpu:0", got {device!r}')
        super().__init__(device)
