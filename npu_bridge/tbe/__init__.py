"""npu_bridge.tbe: the adapter's TBE vector and cube op wrappers.

A public face ported scripts import: importing it (or any module under it) switches the emulation on.
"""
import npu_bridge

npu_bridge.activate()
