"""Precision debugging for the emulated NPU: data dump, overflow detection, comparison with float32 and a
mixlist that fixes accuracy.

`register()` (called by npu_bridge.activate) adds a session factory to the runtime's run observers: an emulated
session whose options set enable_dump gets a DumpWriter, one with enable_dump_debug an OverflowDetector (the
adapter refuses both at once). Sessions without them get no observer, so their runs are unchanged.
`compare_step` / `comparing` compare emulated steps with their float32 ground truth from Python (api.py); the
`npu-debug` console script (cli.py) runs the same code on unmodified scripts, and converts dumps to .npy.
"""
from npu_bridge.debug.api import compare_step, comparing
from npu_bridge.debug.detector import OverflowDetector
from npu_bridge.debug.dump import DumpWriter
from npu_bridge.runtime import observers

__all__ = ["compare_step", "comparing", "register"]


def session_observer(emulation):
    """The dump or overflow observer `emulation`'s options ask for, or None."""
    dump = emulation.options.dump
    if dump.enable_dump:
        return DumpWriter(emulation)
    if dump.enable_dump_debug:
        return OverflowDetector(emulation)
    return None


def register():
    """Let new emulated sessions ask for their dump / overflow observer (idempotent)."""
    observers.add_session_factory(session_observer)
