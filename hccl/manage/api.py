"""`hccl.manage.api` as real scripts import it; see npu_bridge.hccl.rank for the one-rank semantics."""
from npu_bridge.hccl.rank import (  # noqa: F401
    get_local_rank_id,
    get_local_rank_size,
    get_rank_id,
    get_rank_size,
)
