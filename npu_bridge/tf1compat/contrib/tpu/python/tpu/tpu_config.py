"""contrib.tpu's tpu_config module: the configuration names of tf.contrib.tpu."""
from npu_bridge.tf1compat.contrib.tpu import InputPipelineConfig, RunConfig, TPUConfig  # noqa: F401
