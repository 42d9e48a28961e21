"""npu_bridge.npu_cpu: the adapter's AI CPU ops.

A public face ported scripts import: importing it (or any module under it) switches the emulation on.
"""
import npu_bridge

npu_bridge.activate()
