"""HCCL (Huawei collective communication) on emulated NPUs: one process per rank, collectives through
TensorFlow's distributed runtime (npu_bridge.distributed). A one-rank job needs no setup at all.

A public face ported scripts import: importing it (or any module under it) switches the emulation on.
"""
import npu_bridge
from npu_bridge.hccl.rank import (  # noqa: F401
    get_local_rank_id,
    get_local_rank_size,
    get_rank_id,
    get_rank_size,
)

npu_bridge.activate()
