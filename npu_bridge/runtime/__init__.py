"""The emulated NPU session: runs sessions configured with the NpuOptimizer through the precision pass.

`activate()` is called by `import npu_bridge`; afterwards every tf.compat.v1 session whose ConfigProto holds the
`NpuOptimizer` custom optimizer (with `use_off_line` true) executes the rewritten graph, and every other session
is plain TensorFlow. `last_report(sess)` explains what the pass did to the graph that session runs.
"""
from npu_bridge.runtime.activation import activate
from npu_bridge.runtime.emulated import last_report

__all__ = ["activate", "last_report"]
