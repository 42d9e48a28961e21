"""contrib.tpu's tpu_function: TensorFlow's own (get_tpu_context() reports no shards outside a TPU program)."""
from tensorflow.python.tpu.tpu_function import TpuContext, get_tpu_context, on_device_training_loop  # noqa: F401
from tensorflow.python.tpu.tpu_function import tpu_shard_context  # noqa: F401
