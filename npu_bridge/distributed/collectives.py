"""HCCL's collectives as TensorFlow collective ops between the rank processes.

Keys: every HCCL group is one TensorFlow collective group (the world group is key 1; a group from
create_group gets a key derived from its name, so every member computes the same one). Within a group, ops
are numbered in the order the script creates them: ranks that build the same collectives in the same order (as
HCCL requires too) agree on every instance key without talking. Point-to-point send/receive use a two-rank
group per pair and their sr_tag as the instance, which is how HCCL pairs them.

Every op waits at most collective_timeout() seconds (HCCL_EXEC_TIMEOUT) for the other ranks, then fails.
The ops run on this rank's device; dtypes are kept (a float16 all-reduce sums in float16, as HCCL does).
"""
import threading
import zlib

import tensorflow.compat.v1 as tf

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed.job import collective_timeout, current_job

WORLD_GROUP = "hccl_world_group"
_WORLD_KEY = 1
_INSTANCE_BITS = 18       # instance keys are int32: group key (< 2**13) above, op number below
_MERGE = {"sum": "Add", "prod": "Mul", "max": "Max", "min": "Min"}

_lock = threading.Lock()
_groups = {}               # name -> (group key, world ranks in group-rank order)
_counters = {}             # group key -> instance ops created


def register_group(name, world_ranks):
    """Make `name` a group of `world_ranks` (group rank i is world_ranks[i])."""
    key = 2 + zlib.crc32(name.encode()) % 2000
    with _lock:
        for other, (other_key, _) in _groups.items():
            if other_key == key:
                raise NpuConfigError(f"create_group: group {name!r} collides with group {other!r}; choose another name")
        _groups[name] = (key, tuple(world_ranks))


def unregister_group(name):
    with _lock:
        _groups.pop(name, None)


def has_group(name):
    return name == WORLD_GROUP or name in _groups


def group_members(name):
    """World ranks of group `name` in group-rank order."""
    if name == WORLD_GROUP:
        return tuple(range(current_job().size))
    return _groups[name][1]


def _group_key(name):
    return _WORLD_KEY if name == WORLD_GROUP else _groups[name][0]


def _next_instance(group_key):
    with _lock:
        count = _counters.get(group_key, 0) + 1
        _counters[group_key] = count
    return (group_key << _INSTANCE_BITS) | count


def _keys(group):
    members = group_members(group)
    if current_job().rank not in members:
        raise NpuConfigError(f"group {group!r} has world ranks {list(members)}; rank {current_job().rank} is not one "
                             "of them and cannot take part in its collectives")
    key = _group_key(group)
    return len(members), key, _next_instance(key)


def _device():
    return tf.device(current_job().device())


def all_reduce(tensor, reduction, group, name):
    size, group_key, instance = _keys(group)
    with _device():
        return tf.raw_ops.CollectiveReduceV2(
            input=tensor, group_size=size, group_key=group_key, instance_key=instance, ordering_token=[],
            merge_op=_MERGE[reduction], final_op="Id", timeout_seconds=collective_timeout(), name=name)


def all_gather(tensor, group, name):
    size, group_key, instance = _keys(group)
    with _device():
        return tf.raw_ops.CollectiveGatherV2(
            input=tensor, group_size=size, group_key=group_key, instance_key=instance, ordering_token=[],
            timeout_seconds=collective_timeout(), name=name)


def broadcast(tensor, root_group_rank, group, name):
    """`tensor` of group rank root_group_rank on every member (the root sends, the others receive)."""
    size, group_key, instance = _keys(group)
    members = group_members(group)
    with _device():
        if members[root_group_rank] == current_job().rank:
            return tf.raw_ops.CollectiveBcastSendV2(
                input=tensor, group_size=size, group_key=group_key, instance_key=instance,
                timeout_seconds=collective_timeout(), name=name)
        return tf.raw_ops.CollectiveBcastRecvV2(
            group_size=size, group_key=group_key, instance_key=instance, shape=tf.shape(tensor), T=tensor.dtype,
            timeout_seconds=collective_timeout(), name=name)


def _pair_key(a, b):
    low, high = sorted((a, b))
    return 2048 + low * 64 + high


def _pair_instance(pair_key, sr_tag):
    return (pair_key << _INSTANCE_BITS) | (sr_tag & ((1 << _INSTANCE_BITS) - 1))


def send(tensor, sr_tag, dest_world_rank, name):
    key = _pair_key(current_job().rank, dest_world_rank)
    with _device():
        return tf.raw_ops.CollectiveBcastSendV2(
            input=tensor, group_size=2, group_key=key, instance_key=_pair_instance(key, sr_tag),
            timeout_seconds=collective_timeout(), name=name)


def receive(shape, dtype, sr_tag, src_world_rank, name):
    key = _pair_key(current_job().rank, src_world_rank)
    with _device():
        return tf.raw_ops.CollectiveBcastRecvV2(
            group_size=2, group_key=key, instance_key=_pair_instance(key, sr_tag), shape=shape, T=dtype,
            timeout_seconds=collective_timeout(), name=name)


def group_of_key(group_key):
    """The name of the group with TensorFlow group key `group_key`."""
    if group_key == _WORLD_KEY:
        return WORLD_GROUP
    return next(name for name, (key, _) in _groups.items() if key == group_key)
