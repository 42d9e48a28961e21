"""Rank queries and groups of hccl.manage.api, answered from the job the environment describes.

A one-rank job (RANK_SIZE unset or 1) needs nothing else. A multi-rank job (RANK_SIZE > 1) also needs
RANK_ID and a RANK_TABLE_FILE, as on the NPU; `npu-run --ranks N` sets them (npu_bridge.distributed).
"""
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed import collectives
from npu_bridge.distributed.collectives import WORLD_GROUP
from npu_bridge.distributed.job import current_job

_MAX_GROUP_NAME = 127         # the real API's limit: 128 bytes with the terminating NUL


def job():
    """The current Job (raises NpuConfigError naming the variable or file when the environment is inconsistent)."""
    return current_job()


def _check_group_name(group, what):
    if not isinstance(group, str):
        raise ValueError(f"{what}: group must be a python str, got {type(group).__name__}")
    if not group or len(group.encode()) > _MAX_GROUP_NAME:
        raise ValueError(f"{what}: group name {group!r} must have 1 to {_MAX_GROUP_NAME} bytes (UTF-8)")


def check_group(group, what):
    """Raise unless `group` is the world group or one create_group made (the real API fails on other names)."""
    _check_group_name(group, what)
    job()
    if not collectives.has_group(group):
        raise ValueError(f"{what}: group {group!r} does not exist; create it with create_group first "
                         f"(or use {WORLD_GROUP!r})")


def members(group):
    """World ranks of `group`, in group-rank order."""
    return collectives.group_members(group)


def _check_rank(rank, what, size):
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
        raise ValueError(f"{what}: a rank id must be an int >= 0, got {rank!r}")
    if rank >= size:
        raise NpuConfigError(f"{what}: rank {rank} does not exist; the job has ranks 0..{size - 1} "
                             f"(RANK_SIZE={size})")


def get_rank_size(group=WORLD_GROUP):
    """Number of ranks in `group`."""
    check_group(group, "get_rank_size")
    return len(members(group))


def get_rank_id(group=WORLD_GROUP):
    """Rank of this process in `group`."""
    check_group(group, "get_rank_id")
    rank = job().rank
    if rank not in members(group):
        raise NpuConfigError(f"get_rank_id: rank {rank} is not in group {group!r} (world ranks {list(members(group))})")
    return members(group).index(rank)


def get_local_rank_size(group=WORLD_GROUP):
    """Ranks of `group` on this server (the rank table's server_list entry of this rank)."""
    check_group(group, "get_local_rank_size")
    local = set(job().local_ranks())
    return sum(1 for rank in members(group) if rank in local)


def get_local_rank_id(group=WORLD_GROUP):
    """Rank of this process among the ranks of `group` on this server."""
    check_group(group, "get_local_rank_id")
    local = set(job().local_ranks())
    return [rank for rank in members(group) if rank in local].index(job().rank)


def create_group(group, rank_num, rank_ids):
    """Create a communication group of the listed world ranks (group rank i is rank_ids[i])."""
    _check_group_name(group, "create_group")
    if group == WORLD_GROUP:
        raise ValueError(f"create_group: {WORLD_GROUP!r} exists from the start and cannot be created")
    if collectives.has_group(group):
        raise ValueError(f"create_group: group {group!r} already exists")
    if not isinstance(rank_ids, (list, tuple)) or not rank_ids:
        raise ValueError(f"create_group: rank_ids must be a non-empty list of rank ids, got {rank_ids!r}")
    if rank_num != len(rank_ids):
        raise ValueError(f"create_group: rank_num {rank_num!r} differs from the {len(rank_ids)} ids in rank_ids")
    if len(set(rank_ids)) != len(rank_ids):
        raise ValueError(f"create_group: rank_ids {list(rank_ids)} names a rank twice")
    size = job().size
    for rank in rank_ids:
        _check_rank(rank, "create_group", size)
    collectives.register_group(group, rank_ids)


def destroy_group(group):
    """Destroy a group made by create_group."""
    check_group(group, "destroy_group")
    if group == WORLD_GROUP:
        raise ValueError(f"destroy_group: {WORLD_GROUP!r} cannot be destroyed")
    collectives.unregister_group(group)


def get_world_rank_from_group_rank(group, group_rank_id):
    """The world rank of rank `group_rank_id` of `group`."""
    check_group(group, "get_world_rank_from_group_rank")
    _check_rank(group_rank_id, "get_world_rank_from_group_rank", len(members(group)))
    return members(group)[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id, group):
    """The rank in `group` of world rank `world_rank_id`."""
    check_group(group, "get_group_rank_from_world_rank")
    _check_rank(world_rank_id, "get_group_rank_from_world_rank", job().size)
    if world_rank_id not in members(group):
        raise NpuConfigError(f"get_group_rank_from_world_rank: rank {world_rank_id} is not in group {group!r} "
                             f"(world ranks {list(members(group))})")
    return members(group).index(world_rank_id)
