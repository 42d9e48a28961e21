"""npu_bridge.hccl.hccl_ops: the HCCL collective ops with the real package's signatures and semantics.

On one rank every collective is the identity (the sum / max / min / product over one tensor is that tensor, a
broadcast from rank 0 leaves it as it is, an allgather over one rank returns it). On N ranks they run as
TensorFlow collective ops between the rank processes (npu_bridge.distributed.collectives). The arguments are
checked either way, so a script that would fail on the NPU fails here too. `fusion` / `fusion_id` only tune how
the NPU batches its transfers: they are checked and change nothing.

Semantics worth knowing: `broadcast` takes and returns a list of tensors; `reduce` gives the reduced value to
every rank (HCCL leaves the non-root outputs unspecified); `reduce_scatter` gives group rank i the i-th of
rank_size equal slices of axis 0; the gradient of `allreduce` is the sum-allreduce of the incoming gradient,
as the real op registers it (the other HCCL ops have none). The remote-memory ops (remote_read, ...) have no
meaning without device memory and are not provided.
"""
import tensorflow.compat.v1 as tf
from tensorflow.python.framework import tensor_util

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed import collectives
from npu_bridge.hccl.rank import WORLD_GROUP, check_group, job, members

_REDUCTIONS = ("sum", "prod", "max", "min")


def _check_reduction(op, reduction):
    if reduction not in _REDUCTIONS:
        raise NpuConfigError(f"{op}: reduction {reduction!r} is invalid, it should be one of {list(_REDUCTIONS)}")


def _check_fusion(op, fusion, fusion_id, allowed):
    if isinstance(fusion, bool) or fusion not in allowed:
        raise ValueError(f"{op}: fusion {fusion!r} is invalid, it should be one of {list(allowed)}")
    if isinstance(fusion_id, bool) or not isinstance(fusion_id, int):
        raise ValueError(f"{op}: fusion_id must be an int, got {fusion_id!r}")


def _check_root(op, root_rank, group):
    size = len(members(group))
    if isinstance(root_rank, bool) or not isinstance(root_rank, int) or not 0 <= root_rank < size:
        raise NpuConfigError(f"{op}: root_rank {root_rank!r} does not exist in group {group!r} "
                             f"(group ranks 0..{size - 1})")


def _check_rank_size(op, rank_size, group):
    size = len(members(group))
    if rank_size != size:
        raise NpuConfigError(f"{op}: rank_size {rank_size!r} but group {group!r} has {size} rank(s)")


def allreduce(tensor, reduction, fusion=1, fusion_id=-1, group=WORLD_GROUP):
    """All-reduce `tensor` over the ranks of `group` with `reduction` (sum, prod, max, min)."""
    check_group(group, "hccl_ops.allreduce")
    _check_reduction("hccl_ops.allreduce", reduction)
    _check_fusion("hccl_ops.allreduce", fusion, fusion_id, (0, 1, 2))
    tensor = tf.convert_to_tensor(tensor)
    if len(members(group)) == 1:
        return tf.identity(tensor, name="HcomAllReduce")
    with tf.get_default_graph().gradient_override_map({"CollectiveReduceV2": "HcomAllReduce"}):
        return collectives.all_reduce(tensor, reduction, group, name="HcomAllReduce")


@tf.RegisterGradient("HcomAllReduce")
def _allreduce_grad(op, grad):
    """As the real HcomAllReduce gradient: the sum over the ranks of the incoming gradient (the key inputs of the
    TensorFlow op have none)."""
    group = collectives.group_of_key(tensor_util.constant_value(op.inputs[2]))
    return [allreduce(grad, "sum", fusion=0, group=group)] + [None] * (len(op.inputs) - 1)


def broadcast(tensor, root_rank, fusion=2, fusion_id=0, group=WORLD_GROUP):
    """Broadcast a list of tensors from group rank `root_rank`; returns the list of broadcast tensors."""
    check_group(group, "hccl_ops.broadcast")
    _check_fusion("hccl_ops.broadcast", fusion, fusion_id, (0, 2))
    _check_root("hccl_ops.broadcast", root_rank, group)
    tensors = [tf.convert_to_tensor(t) for t in tensor]
    if len(members(group)) == 1:
        return [tf.identity(t, name="HcomBroadcast") for t in tensors]
    return [collectives.broadcast(t, root_rank, group, name="HcomBroadcast") for t in tensors]


def allgather(tensor, rank_size, group=WORLD_GROUP, fusion=0, fusion_id=-1):
    """Concatenate `tensor` of every rank of `group` along axis 0, in group-rank order."""
    check_group(group, "hccl_ops.allgather")
    _check_fusion("hccl_ops.allgather", fusion, fusion_id, (0, 2))
    _check_rank_size("hccl_ops.allgather", rank_size, group)
    tensor = tf.convert_to_tensor(tensor)
    if rank_size == 1:
        return tf.identity(tensor, name="HcomAllGather")
    return collectives.all_gather(tensor, group, name="HcomAllGather")


def reduce_scatter(tensor, reduction, rank_size, group=WORLD_GROUP, fusion=0, fusion_id=-1):
    """Reduce `tensor` over the ranks and give group rank i the i-th of rank_size equal slices of axis 0."""
    check_group(group, "hccl_ops.reduce_scatter")
    _check_reduction("hccl_ops.reduce_scatter", reduction)
    _check_fusion("hccl_ops.reduce_scatter", fusion, fusion_id, (0, 2))
    _check_rank_size("hccl_ops.reduce_scatter", rank_size, group)
    tensor = tf.convert_to_tensor(tensor)
    if rank_size == 1:
        return tf.identity(tensor, name="HcomReduceScatter")
    first = tensor.shape[0] if tensor.shape.rank else None
    if first is not None and first % rank_size:
        raise NpuConfigError(f"hccl_ops.reduce_scatter: axis 0 of {tensor.name} has {first} rows, not a multiple of "
                             f"rank_size {rank_size}")
    with tf.name_scope("HcomReduceScatter"):
        reduced = collectives.all_reduce(tensor, reduction, group, name="HcomAllReduce")
        chunk = tf.shape(reduced)[0] // rank_size
        index = members(group).index(job().rank)
        return tf.slice(reduced, tf.concat([[index * chunk], tf.zeros([tf.rank(reduced) - 1], tf.int32)], 0),
                        tf.concat([[chunk], tf.shape(reduced)[1:]], 0))


def reduce(tensor, reduction, root_rank, fusion=0, fusion_id=-1, group=WORLD_GROUP):
    """Reduce `tensor` over the ranks onto group rank `root_rank` (the other ranks receive the same value)."""
    check_group(group, "hccl_ops.reduce")
    _check_reduction("hccl_ops.reduce", reduction)
    _check_fusion("hccl_ops.reduce", fusion, fusion_id, (0, 2))
    _check_root("hccl_ops.reduce", root_rank, group)
    tensor = tf.convert_to_tensor(tensor)
    if len(members(group)) == 1:
        return tf.identity(tensor, name="HcomReduce")
    return collectives.all_reduce(tensor, reduction, group, name="HcomReduce")


def _peer(op, rank, group, key):
    size = len(members(group))
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < size:
        raise NpuConfigError(f"{op}: {key} {rank!r} does not exist in group {group!r} (group ranks 0..{size - 1})")
    world = members(group)[rank]
    if world == job().rank:
        raise NpuConfigError(f"{op}: {key} {rank} is this rank itself")
    return world


def _check_tag(op, sr_tag):
    if isinstance(sr_tag, bool) or not isinstance(sr_tag, int) or sr_tag < 0:
        raise ValueError(f"{op}: sr_tag must be an int >= 0, got {sr_tag!r}")


def send(tensor, sr_tag, dest_rank, group=WORLD_GROUP):
    """Send `tensor` to group rank `dest_rank`; the receive with the same sr_tag on that rank gets it."""
    check_group(group, "hccl_ops.send")
    _check_tag("hccl_ops.send", sr_tag)
    dest = _peer("hccl_ops.send", dest_rank, group, "dest_rank")
    return collectives.send(tf.convert_to_tensor(tensor), sr_tag, dest, name="HcomSend").op


def receive(shape, data_type, sr_tag, src_rank, group=WORLD_GROUP):
    """Receive a tensor of `shape` and `data_type` sent by group rank `src_rank` with the same sr_tag."""
    check_group(group, "hccl_ops.receive")
    _check_tag("hccl_ops.receive", sr_tag)
    src = _peer("hccl_ops.receive", src_rank, group, "src_rank")
    return collectives.receive(shape, tf.as_dtype(data_type), sr_tag, src, name="HcomReceive")


def all_to_all_v(send_data, send_counts, send_displacements, recv_counts, recv_displacements, group=WORLD_GROUP):
    """Each rank sends send_data[send_displacements[j]:][:send_counts[j]] (flattened, counts in elements) to group
    rank j, and puts what group rank i sent it at recv_displacements[i] of its output. Emulated with all-gathers:
    of every rank's counts and displacements, then of every rank's data padded to the longest."""
    check_group(group, "hccl_ops.all_to_all_v")
    size = len(members(group))
    data = tf.reshape(tf.convert_to_tensor(send_data), [-1])
    layout = tf.cast(tf.stack([send_counts, send_displacements]), tf.int64)           # [2, size]
    recv_counts = tf.cast(recv_counts, tf.int64)
    recv_displacements = tf.cast(recv_displacements, tf.int64)
    me = members(group).index(job().rank)
    if size == 1:
        layouts, gathered = layout[tf.newaxis], data[tf.newaxis]
    else:
        layouts = collectives.all_gather(layout[tf.newaxis], group, name="HcomAllToAllVLayout")   # [size, 2, size]
        length = tf.shape(data, out_type=tf.int64)
        longest = tf.reduce_max(collectives.all_gather(length, group, name="HcomAllToAllVLength"))
        padded = tf.pad(data, [[0, longest - length[0]]])
        gathered = tf.reshape(collectives.all_gather(padded, group, name="HcomAllToAllV"), [size, -1])
    indices, pieces = [], []
    for source in range(size):
        count, start = layouts[source, 0, me], layouts[source, 1, me]
        pieces.append(gathered[source, start:start + count])
        indices.append(recv_displacements[source] + tf.range(count))
    extent = tf.reduce_max(recv_displacements + recv_counts)
    return tf.scatter_nd(tf.concat(indices, 0)[:, tf.newaxis], tf.concat(pieces, 0), extent[tf.newaxis],
                         name="HcomAllToAllVOutput")
