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


def get_rank_size(group="hccl_world_group"):
    """Number of ranks in `group`: always 1 on the emulator (RANK_SIZE > 1 is an error)."""
    check_single_rank("get_rank_size")
    return 1


def get_rank_id(group="hccl_world_group"):
    """Rank of this process in `group`: always 0 on the emulator."""
    check_single_rank("get_rank_id")
    return 0


def get_local_rank_size(group="hccl_world_group"):
    """Ranks on this server: 1."""
    check_single_rank("get_local_rank_size")
    return 1


def get_local_rank_id(group="hccl_world_group"):
    """Rank of this process on this server: 0."""
    check_single_rank("get_local_rank_id")
    return 0
