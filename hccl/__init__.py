"""The CANN `hccl` package that Ascend scripts import directly (`from hccl.manage.api import get_rank_size`).

On the emulator it is an alias of npu_bridge.hccl: one rank, and RANK_SIZE > 1 is a clear error.
"""
