"""HCCL (Huawei collective communication) on one emulated NPU.

The emulator runs one process on one device. Rank queries answer for that single rank; a RANK_SIZE above 1
asks for a multi-device job, which cannot be reproduced here, so it is refused with a clear error instead of
silently training on one rank while the script believes it has eight.
"""
from npu_bridge.hccl.rank import (  # noqa: F401
    check_single_rank,
    get_local_rank_id,
    get_local_rank_size,
    get_rank_id,
    get_rank_size,
)
