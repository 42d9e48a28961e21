"""contrib.tpu's tpu_function: TensorFlow's own (get_tpu_context() reports no shards outside a TPU program)."""
from tensorflow.python.tpu.tpu_function import (  # noqa: F401
    TpuContext,
    get_tpu_context,
    on_device_training_loop,
    tpu_shard_context,
)
