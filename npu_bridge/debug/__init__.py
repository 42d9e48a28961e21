"""Precision debugging for the emulated NPU: comparison with float32 and a mixlist that fixes accuracy.

`compare_step` / `comparing` compare emulated steps with their float32 ground truth from Python (api.py); the
`npu-debug` console script (cli.py) runs the same code on unmodified scripts.
"""
from npu_bridge.debug.api import compare_step, comparing

__all__ = ["compare_step", "comparing"]
