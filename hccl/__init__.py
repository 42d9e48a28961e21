"""The CANN `hccl` package that Ascend scripts import directly (`from hccl.manage.api import get_rank_size`).

On the emulator it is an alias of npu_bridge.hccl: rank queries and groups of the job RANK_SIZE, RANK_ID and
RANK_TABLE_FILE describe. Importing it switches the emulation on, as npu_bridge.hccl does.
"""
import npu_bridge

npu_bridge.activate()
