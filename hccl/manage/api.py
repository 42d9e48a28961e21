"""`hccl.manage.api` as real scripts import it; see npu_bridge.hccl.rank."""
from npu_bridge.hccl.rank import (  # noqa: F401
    create_group,
    destroy_group,
    get_group_rank_from_world_rank,
    get_local_rank_id,
    get_local_rank_size,
    get_rank_id,
    get_rank_size,
    get_world_rank_from_group_rank,
)
