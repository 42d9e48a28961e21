"""Precision debugging for the emulated NPU: data dump, overflow detection, comparison with float32 and a
mixlist that fixes accuracy.

`register()` (called by npu_bridge.activate) adds a session factory to the runtime's run observers: an emulated
session whose options set enable_dump gets a DumpWriter, one with enable_dump_debug an OverflowDetector (the
adapter refuses both at once). Sessions without them get no observer, so their runs are unchanged.
`compare_step` / `comparing` compare emulated steps with their float32 ground truth from Python (api.py); the
`npu-debug` console script (cli.py) runs the same code on unmodified scripts, and converts dumps to .npy.

The names are imported when first read: `npu-debug --help` imports this package without importing TensorFlow.
"""
import importlib

__all__ = ["compare_step", "comparing", "register"]
_HOMES = {"compare_step": "api", "comparing": "api"}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


def session_observer(emulation):
    """The dump or overflow observer `emulation`'s options ask for, or None."""
    dump = emulation.options.dump
    if dump.enable_dump:
        from npu_bridge.debug.dump import DumpWriter

        return DumpWriter(emulation)
    if dump.enable_dump_debug:
        from npu_bridge.debug.detector import OverflowDetector

        return OverflowDetector(emulation)
    return None


def register():
    """Let new emulated sessions ask for their dump / overflow observer (idempotent)."""
    from npu_bridge.runtime import observers

    observers.add_session_factory(session_observer)
