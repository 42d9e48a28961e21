"""npu_bridge.estimator: the Ascend adapter's estimator-side API (ops, config, optimizers, loss scaling).

A public face ported scripts import: importing it (or any module under it) switches the emulation on.
"""
import npu_bridge

npu_bridge.activate()
