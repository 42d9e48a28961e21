"""The rank's TensorFlow gRPC server and what a session needs to run collectives through it.

A collective op only reaches the other processes from a session whose target is this rank's server: a local
session ("" target) cannot see them. So in a multi-rank job every session the script opens with the default
target is given the server's target and a collective-capable config (`session_settings`); the runtime applies
it through `runtime.activation.set_session_environment`, for emulated and plain sessions alike.

The config keeps a plain session's meaning: `isolate_session_state` gives each session its own variables (a
gRPC server would otherwise share them by name between sessions, unlike a local session), `device_filters`
keep the session on this rank's devices (ops without a device land here, and creating a session does not wait
for the other ranks), and `experimental.collective_group_leader` (rank 0) is where groups are formed.
"""
import socket
import threading

from tensorflow.core.protobuf import config_pb2
from tensorflow.python.framework import errors
from tensorflow.python.training import server_lib

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed.job import JOB_NAME, collective_timeout, current_job
from npu_bridge.distributed.ports import port_is_free

_lock = threading.Lock()
_server = None            # (job, tf.distribute.Server) once started


def leader():
    return f"/job:{JOB_NAME}/replica:0/task:0"


def collective_config(job, config=None):
    """A copy of `config` (or a new ConfigProto) set up to run collectives as rank `job.rank`."""
    result = config_pb2.ConfigProto()
    if config is not None:
        result.CopyFrom(config)
    result.experimental.collective_group_leader = leader()
    result.isolate_session_state = True
    del result.device_filters[:]
    result.device_filters.append(f"/job:{JOB_NAME}/task:{job.rank}")
    return result


def _check_addresses(job):
    """Every rank's address must belong to this machine, and this rank's port must be free."""
    for entry in job.table.ranks:
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            probe.bind((entry.server_id, 0))
        except OSError:
            raise NpuConfigError(
                f"rank table {job.table.path}: server_id {entry.server_id!r} (rank {entry.rank_id}) is not an address "
                "of this machine; npu_bridge runs every rank here: write 127.0.0.1 or this host's address") from None
        finally:
            probe.close()
    port = job.base_port + job.rank
    if not port_is_free(port):
        raise NpuConfigError(
            f"rank {job.rank}: port {port} (HCCL_IF_BASE_PORT {job.base_port} + rank {job.rank}) is already in use: "
            f"another process started with RANK_ID={job.rank} (a duplicate RANK_ID), or another program holds the "
            "port; set HCCL_IF_BASE_PORT to a free range")


def ensure_server(job=None):
    """Start this rank's server once per process and return it (the same job must ask every time)."""
    global _server
    job = job or current_job()
    with _lock:
        if _server is not None:
            if _server[0] != job:
                raise NpuConfigError(f"this process already runs rank {_server[0].rank} of a {_server[0].size}-rank "
                                     f"job; it cannot become rank {job.rank} of another (RANK_* changed)")
            return _server[1]
        _check_addresses(job)
        cluster = server_lib.ClusterSpec({JOB_NAME: [job.address(rank) for rank in range(job.size)]})
        server = server_lib.Server(cluster, job_name=JOB_NAME, task_index=job.rank,
                                   config=collective_config(job), start=True)
        _server = (job, server)
        return server


class SessionEnvironment:
    """What runtime.activation asks before each session is created, and after a run fails."""

    def session_settings(self, target, config):
        """(target, config) for a new session: the rank's server for sessions opened with the default target."""
        job = current_job()
        if not job.distributed or target:
            return target, config
        return ensure_server(job).target, collective_config(job, config)

    def explain(self, error):
        """An OpError naming the ranks that are gone when a collective failed, else None."""
        job = current_job()
        if not job.distributed or not isinstance(error, (errors.DeadlineExceededError, errors.UnavailableError,
                                                         errors.AbortedError, errors.CancelledError,
                                                         errors.InternalError)):
            return None
        if "ollective" not in error.message and "/job:" not in error.message:
            return None
        gone = [rank for rank in range(job.size) if rank != job.rank and not _answers(job.address(rank))]
        if gone:
            names = ", ".join(f"rank {rank} ({job.address(rank)})" for rank in gone)
            summary = (f"npu_bridge multi-rank job: {names} stopped (its server no longer answers: the process "
                       f"exited or was killed), so rank {job.rank} stops too.")
        else:
            summary = (f"npu_bridge multi-rank job: a collective of rank {job.rank} waited longer than "
                       f"HCCL_EXEC_TIMEOUT={collective_timeout():g} s for the other ranks; every rank's server still "
                       "answers, so a rank is stuck or runs different collectives.")
        return type(error)(error.node_def, error.op, f"{summary}\n{error.message}")


def _answers(address):
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1.0):
            return True
    except OSError:
        return False
