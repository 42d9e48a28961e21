"""tensorflow.contrib.tpu.python.tpu: TF 1.15's modules of that path, on the CPU-only names of contrib.tpu."""
from npu_bridge.tf1compat.contrib.tpu.python.tpu import (  # noqa: F401
    async_checkpoint,
    tpu_config,
    tpu_estimator,
    tpu_function,
)

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
