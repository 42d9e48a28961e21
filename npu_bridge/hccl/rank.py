"""Rank size and id of the (single) emulated device, read from the environment variables NPU launch scripts set."""
import os

from npu_bridge.core.errors import NpuConfigError


def _env_int(name, default):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise NpuConfigError(f"environment variable {name}={raw!r} is not an integer") from None


def check_single_rank(what="this script"):
    """Raise unless the environment describes a one-rank job (RANK_SIZE unset or 1).

    RANK_ID is not checked: one-device launch scripts often set it to the device number, and in a one-rank job
    the only rank is 0 whatever the variable says.
    """
    rank_size = _env_int("RANK_SIZE", 1)
    if rank_size != 1:
        raise NpuConfigError(
            f"RANK_SIZE={rank_size}: {what} asks for a {rank_size}-rank HCCL job, but npu_bridge emulates a single "
            "NPU and multi-rank training is not supported yet. Run with RANK_SIZE=1 (or unset)."
        )


WORLD_GROUP = "hccl_world_group"
_MAX_GROUP_NAME = 127         # the real API's limit: 128 bytes with the terminating NUL
_created_groups = set()


def _check_group_name(group, what):
    if not isinstance(group, str):
        raise ValueError(f"{what}: group must be a python str, got {type(group).__name__}")
    if not group or len(group.encode()) > _MAX_GROUP_NAME:
        raise ValueError(f"{what}: group name {group!r} must have 1 to {_MAX_GROUP_NAME} bytes (UTF-8)")


def check_group(group, what):
    """Raise unless `group` is the world group or one create_group made (the real API fails on other names)."""
    _check_group_name(group, what)
    if group != WORLD_GROUP and group not in _created_groups:
        raise ValueError(f"{what}: group {group!r} does not exist; create it with create_group first "
                         f"(or use {WORLD_GROUP!r})")


def _check_rank(rank, what):
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
        raise ValueError(f"{what}: a rank id must be an int >= 0, got {rank!r}")
    if rank != 0:
        raise NpuConfigError(f"{what}: rank {rank} does not exist; npu_bridge emulates a single NPU, rank 0")


def get_rank_size(group=WORLD_GROUP):
    """Number of ranks in `group`: always 1 on the emulator (RANK_SIZE > 1 is an error)."""
    check_single_rank("get_rank_size")
    check_group(group, "get_rank_size")
    return 1


def get_rank_id(group=WORLD_GROUP):
    """Rank of this process in `group`: always 0 on the emulator."""
    check_single_rank("get_rank_id")
    check_group(group, "get_rank_id")
    return 0


def get_local_rank_size(group=WORLD_GROUP):
    """Ranks on this server: 1."""
    check_single_rank("get_local_rank_size")
    check_group(group, "get_local_rank_size")
    return 1


def get_local_rank_id(group=WORLD_GROUP):
    """Rank of this process on this server: 0."""
    check_single_rank("get_local_rank_id")
    check_group(group, "get_local_rank_id")
    return 0


def create_group(group, rank_num, rank_ids):
    """Create a communication group of the listed world ranks: on the emulator only [0] can be listed."""
    check_single_rank("create_group")
    _check_group_name(group, "create_group")
    if group == WORLD_GROUP:
        raise ValueError(f"create_group: {WORLD_GROUP!r} exists from the start and cannot be created")
    if group in _created_groups:
        raise ValueError(f"create_group: group {group!r} already exists")
    if not isinstance(rank_ids, (list, tuple)) or not rank_ids:
        raise ValueError(f"create_group: rank_ids must be a non-empty list of rank ids, got {rank_ids!r}")
    if rank_num != len(rank_ids):
        raise ValueError(f"create_group: rank_num {rank_num!r} differs from the {len(rank_ids)} ids in rank_ids")
    if len(set(rank_ids)) != len(rank_ids):
        raise ValueError(f"create_group: rank_ids {list(rank_ids)} names a rank twice")
    for rank in rank_ids:
        _check_rank(rank, "create_group")
    _created_groups.add(group)


def destroy_group(group):
    """Destroy a group made by create_group."""
    check_single_rank("destroy_group")
    check_group(group, "destroy_group")
    if group == WORLD_GROUP:
        raise ValueError(f"destroy_group: {WORLD_GROUP!r} cannot be destroyed")
    _created_groups.discard(group)


def get_world_rank_from_group_rank(group, group_rank_id):
    """The world rank of rank `group_rank_id` of `group`: 0, the only rank."""
    check_single_rank("get_world_rank_from_group_rank")
    check_group(group, "get_world_rank_from_group_rank")
    _check_rank(group_rank_id, "get_world_rank_from_group_rank")
    return 0


def get_group_rank_from_world_rank(world_rank_id, group):
    """The rank in `group` of world rank `world_rank_id`: 0, the only rank."""
    check_single_rank("get_group_rank_from_world_rank")
    check_group(group, "get_group_rank_from_world_rank")
    _check_rank(world_rank_id, "get_group_rank_from_world_rank")
    return 0
