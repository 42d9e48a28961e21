"""The emulated NPU session: runs sessions configured with the NpuOptimizer through the precision pass.

After `activate()` (npu_bridge.activate calls it) every tf.compat.v1 session whose ConfigProto holds the
`NpuOptimizer` custom optimizer (with `use_off_line` true) executes the rewritten graph, and every other session
is plain TensorFlow; `deactivate()` restores TensorFlow's own Session methods. `last_report(sess)` explains what
the pass did to the graph that session runs.

The names are imported when first read, so the tools that only register run observers (runtime.observers, the
artifacts writer behind `npu-report diff`) import this package without importing TensorFlow.
"""
import importlib

__all__ = ["activate", "deactivate", "is_active", "last_report"]
_HOMES = {"activate": "activation", "deactivate": "activation", "is_active": "activation", "last_report": "emulated"}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
