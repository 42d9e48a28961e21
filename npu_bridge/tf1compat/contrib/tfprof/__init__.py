"""tf.contrib.tfprof: the model analyzer ported scripts call to print parameter and FLOP counts, on TensorFlow's
profiler (tf.compat.v1.profiler), which took it over. ProfileContext (per-step session tracing) is not provided."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.tfprof import model_analyzer  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
