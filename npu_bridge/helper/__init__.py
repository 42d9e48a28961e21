"""npu_bridge.helper: `helper.get_gen_ops()`, the adapter's generated op module.

A public face ported scripts import: importing it (or any module under it) switches the emulation on.
"""
import npu_bridge

npu_bridge.activate()
