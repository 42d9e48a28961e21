"""Collective ops of npu_bridge.hccl.hccl_ops for a one-rank job.

With a single rank every collective is the identity: the sum / max / min / product over one tensor is that
tensor, a broadcast from rank 0 leaves it as it is, an allgather over one rank returns it. The ops are still
validated (reduction name, root rank) so a script that would fail on the NPU fails here too.
"""
import tensorflow.compat.v1 as tf

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.hccl.rank import check_group, check_single_rank

_REDUCTIONS = ("sum", "prod", "max", "min")


def _check_job(op, group):
    check_single_rank(op)
    check_group(group, op)


def _check_reduction(op, reduction):
    if reduction not in _REDUCTIONS:
        raise NpuConfigError(f"{op}: reduction {reduction!r} is invalid, it should be one of {list(_REDUCTIONS)}")


def allreduce(tensor, reduction, fusion=1, fusion_id=-1, group="hccl_world_group"):
    """All-reduce `tensor` over the ranks of `group` with `reduction` (sum, prod, max, min): identity on one rank."""
    _check_job("hccl_ops.allreduce", group)
    _check_reduction("hccl_ops.allreduce", reduction)
    return tf.identity(tensor, name="HcomAllReduce")


def broadcast(tensor, root_rank, fusion=2, fusion_id=0, group="hccl_world_group"):
    """Broadcast a list of tensors from `root_rank`: on one rank the root is 0 and the tensors are unchanged."""
    _check_job("hccl_ops.broadcast", group)
    if root_rank != 0:
        raise NpuConfigError(f"hccl_ops.broadcast: root_rank {root_rank} does not exist in a one-rank job (only rank 0)")
    return [tf.identity(t, name="HcomBroadcast") for t in tensor]


def allgather(tensor, rank_size, group="hccl_world_group"):
    """Concatenate `tensor` from every rank along axis 0: itself when rank_size is 1."""
    _check_job("hccl_ops.allgather", group)
    if rank_size != 1:
        raise NpuConfigError(f"hccl_ops.allgather: rank_size {rank_size} but the emulated job has one rank")
    return tf.identity(tensor, name="HcomAllGather")


def reduce_scatter(tensor, reduction, rank_size, group="hccl_world_group", fusion=0, fusion_id=-1):
    """Reduce `tensor` over the ranks and give each rank one slice of axis 0: the whole tensor on one rank."""
    _check_job("hccl_ops.reduce_scatter", group)
    _check_reduction("hccl_ops.reduce_scatter", reduction)
    if rank_size != 1:
        raise NpuConfigError(f"hccl_ops.reduce_scatter: rank_size {rank_size} but the emulated job has one rank")
    return tf.identity(tensor, name="HcomReduceScatter")


def reduce(tensor, reduction, root_rank, fusion=0, fusion_id=-1, group="hccl_world_group"):
    """Reduce `tensor` over the ranks onto `root_rank`: identity on one rank, whose only rank is 0."""
    _check_job("hccl_ops.reduce", group)
    _check_reduction("hccl_ops.reduce", reduction)
    if root_rank != 0:
        raise NpuConfigError(f"hccl_ops.reduce: root_rank {root_rank} does not exist in a one-rank job (only rank 0)")
    return tf.identity(tensor, name="HcomReduce")

