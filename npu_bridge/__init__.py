"""npu_bridge on CPU: the Ascend TensorFlow adapter's Python API, with the NPU's precision behaviour emulated.

Importing any module of the package activates the emulated NPU session: from then on tf.compat.v1 sessions whose
ConfigProto holds the `NpuOptimizer` custom optimizer run through the precision pass.
"""
from npu_bridge.runtime import activate as _activate

_activate()
