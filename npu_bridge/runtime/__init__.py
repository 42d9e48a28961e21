"""The emulated NPU session: runs sessions configured with the NpuOptimizer through the precision pass.

After `activate()` (npu_bridge.activate calls it) every tf.compat.v1 session whose ConfigProto holds the
`NpuOptimizer` custom optimizer (with `use_off_line` true) executes the rewritten graph, and every other session
is plain TensorFlow; `deactivate()` restores TensorFlow's own Session methods. `last_report(sess)` explains what
the pass did to the graph that session runs.
"""
from npu_bridge.runtime.activation import activate, deactivate, is_active
from npu_bridge.runtime.emulated import last_report

__all__ = ["activate", "deactivate", "is_active", "last_report"]
