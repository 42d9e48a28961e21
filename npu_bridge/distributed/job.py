"""This process's place in a multi-rank job, read from the environment variables NPU launch scripts set.

RANK_SIZE (default 1), RANK_ID, RANK_TABLE_FILE, DEVICE_ID / ASCEND_DEVICE_ID, and HCCL_IF_BASE_PORT (the
first of the ports the ranks' servers listen on: rank r uses base + r; 60000 by default, as HCCL's host NIC
ports). A one-rank job needs none of them. Every inconsistency is an NpuConfigError naming the variable, the
file and the value, raised before any server starts or any step runs.
"""
import functools
import os
from dataclasses import dataclass

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed.rank_table import load_rank_table

DEFAULT_BASE_PORT = 60000
DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_RANKS = 64             # collective keys leave room for 64 ranks (distributed.collectives)
JOB_NAME = "worker"


@dataclass(frozen=True)
class Job:
    rank: int
    size: int
    table: object          # RankTable, or None for a one-rank job
    base_port: int

    @property
    def distributed(self):
        return self.size > 1

    def address(self, rank):
        """host:port of rank `rank`'s gRPC server."""
        return f"{self.table.ranks[rank].server_id}:{self.base_port + rank}"

    def device(self, rank=None):
        """The TensorFlow device of rank `rank` (this rank by default)."""
        return f"/job:{JOB_NAME}/replica:0/task:{self.rank if rank is None else rank}/device:CPU:0"

    def local_ranks(self):
        return self.table.local_ranks(self.rank) if self.table else [0]


def _env_int(name, default=None):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise NpuConfigError(f"environment variable {name}={raw!r} is not an integer") from None


def current_job():
    """The Job the environment describes (re-read when the variables change)."""
    names = ("RANK_SIZE", "RANK_ID", "RANK_TABLE_FILE", "DEVICE_ID", "ASCEND_DEVICE_ID", "HCCL_IF_BASE_PORT")
    return _job(tuple(os.environ.get(name) for name in names))


@functools.lru_cache(maxsize=8)
def _job(_environment):
    size = _env_int("RANK_SIZE", 1)
    if not 1 <= size <= MAX_RANKS:
        raise NpuConfigError(f"RANK_SIZE={size} must be between 1 and {MAX_RANKS} (every rank runs on this machine)")
    base_port = _env_int("HCCL_IF_BASE_PORT", DEFAULT_BASE_PORT)
    if size == 1:
        return Job(0, 1, None, base_port)
    table_path = os.environ.get("RANK_TABLE_FILE")
    if not table_path:
        raise NpuConfigError(f"RANK_SIZE={size} but RANK_TABLE_FILE is not set: a multi-rank job needs a rank table "
                             "(`npu-run --ranks N script.py` writes one and sets every variable)")
    table = load_rank_table(table_path)
    if table.size != size:
        raise NpuConfigError(f"RANK_SIZE={size} but rank table {table_path} lists {table.size} ranks "
                             f"(rank_id 0..{table.size - 1}): they must agree")
    rank = _env_int("RANK_ID")
    if rank is None:
        raise NpuConfigError(f"RANK_SIZE={size} but RANK_ID is not set: each rank process needs its own RANK_ID")
    if not 0 <= rank < size:
        raise NpuConfigError(f"RANK_ID={rank} does not exist in rank table {table_path} (rank ids 0..{size - 1})")
    for name in ("DEVICE_ID", "ASCEND_DEVICE_ID"):
        device = _env_int(name)
        if device is not None and device != table.ranks[rank].device_id:
            raise NpuConfigError(
                f"The ranktable config devId is inconsistent with the local devId: rank table {table_path} puts "
                f"rank {rank} on device_id {table.ranks[rank].device_id}, but {name}={device}")
    if not 0 < base_port <= 65535 - size:
        raise NpuConfigError(f"HCCL_IF_BASE_PORT={base_port}: ports {base_port}..{base_port + size - 1} must lie "
                             "in 1..65535")
    return Job(rank, size, table, base_port)


def collective_timeout():
    """Seconds a collective waits for the other ranks before failing: HCCL_EXEC_TIMEOUT, else 120."""
    raw = os.environ.get("HCCL_EXEC_TIMEOUT")
    if raw is None or raw.strip() == "":
        return DEFAULT_TIMEOUT_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise NpuConfigError(f"HCCL_EXEC_TIMEOUT={raw!r} must be a positive number of seconds")
    return value
