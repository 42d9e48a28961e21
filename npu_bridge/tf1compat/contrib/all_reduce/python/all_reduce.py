"""tf.contrib.all_reduce.python.all_reduce: TF 1.15's all-reduce builders, built from ordinary TF ops.

Each builder takes one tensor per device (all of one fully known shape) and returns one tensor per device, each the
reduction of them all, placed on that device; un_op (e.g. a division by the count) is applied to each reduced
value. The algorithms and their devices are TF 1.15's, so the additions happen in its order and on its devices:
- ring: the flattened tensors cut into len(devices) * num_subchunks chunks (zero-padded to fit); each chunk is
  reduced along a ring of the devices (per subchunk a rotated order of gpu_perm within each worker), then passed
  round the ring so every device holds every reduced chunk;
- recursive halving-doubling: log2(devices) rounds of pairwise halving reductions, then doubling concatenations
  (a power-of-two device count, tensor length divisible by it);
- shuffle: each tensor split into one piece per gather device, each piece reduced there by red_op (which takes a
  list, e.g. tf.add_n), the pieces concatenated on every device;
- the two-level builders (nccl_then_*, shuffle_then_*): reduce within each worker (devices grouped by job,
  replica and task), all-reduce the workers' values with the named algorithm, send the result back to each
  worker's devices.
NCCL's kernels run on NVIDIA GPUs only. Here the NCCL stage (build_nccl_all_reduce, the first level of nccl_then_*)
is an AddN on the first of the worker's devices copied to the others: the same sum, on the CPU path a ported
script's multi-device code takes.
"""
import collections
import math

import tensorflow as tf

__all__ = [
    "build_nccl_all_reduce", "build_nccl_then_recursive_hd", "build_nccl_then_ring", "build_nccl_then_shuffle",
    "build_recursive_hd_all_reduce", "build_ring_all_reduce", "build_shuffle_all_reduce", "build_shuffle_then_ring",
    "build_shuffle_then_shuffle",
]

_ADD_OPS = (tf.add, tf.math.add, tf.compat.v1.add, tf.compat.v1.math.add)


def _colocated(tensor):
    """A scope placing new ops with `tensor`."""
    return tensor.graph.colocate_with(tensor.op)


def _flatten(tensors):
    """The tensors as 1-D tensors on their devices, and their common shape (which must be fully known)."""
    if not tensors:
        raise ValueError("all_reduce: input_tensors cannot be empty")
    shape = tensors[0].shape
    for tensor in tensors[1:]:
        shape = shape.merge_with(tensor.shape)
    if not shape.is_fully_defined():
        raise ValueError(f"all_reduce: the tensors must have a fully known shape, got {shape}")
    if shape.rank == 1:
        return list(tensors), shape
    flat = []
    for tensor in tensors:
        with _colocated(tensor):
            flat.append(tf.reshape(tensor, [-1]))
    return flat, shape


def _restore_shape(tensors, shape):
    if shape.rank == 1:
        return tensors
    restored = []
    for tensor in tensors:
        with _colocated(tensor):
            restored.append(tf.reshape(tensor, shape))
    return restored


def _ring_orders(num_workers, num_subchunks, gpu_perm):
    """Per subchunk, the ring of device indices: within each worker gpu_perm rotated by the subchunk's offset."""
    num_gpus = len(gpu_perm)
    if num_subchunks > num_gpus:
        raise ValueError(f"build_ring_all_reduce: num_subchunks {num_subchunks} must be <= the number of GPUs per "
                         f"worker {num_gpus}")
    interval = max(1, num_gpus // num_subchunks)
    orders = []
    for subchunk in range(num_subchunks):
        offset = subchunk * interval
        order = []
        for worker in range(num_workers):
            local = [worker * num_gpus + gpu for gpu in gpu_perm]
            order += local[offset:] + local[:offset]
        orders.append(order)
    return orders


def _pad_and_split(tensor, pieces):
    """`tensor` (1-D) zero-padded to a multiple of `pieces` and split evenly; and the padding's length."""
    length = tensor.shape.num_elements()
    pad = -length % pieces
    with _colocated(tensor):
        if pad:
            tensor = tf.concat([tensor, tf.zeros([pad], tensor.dtype)], 0)
        return tf.split(tensor, pieces), pad


def build_ring_all_reduce(input_tensors, num_workers, num_subchunks, gpu_perm, red_op, un_op=None):
    """All-reduce along rings of the devices (see the module); red_op takes two tensors (e.g. tf.add)."""
    if len(input_tensors) < 2:
        raise ValueError("build_ring_all_reduce: input_tensors must hold 2 or more tensors")
    tensors, shape = _flatten(input_tensors)
    devices = [tensor.device for tensor in tensors]
    count = len(devices)
    if num_workers * len(gpu_perm) != count:
        raise ValueError(f"build_ring_all_reduce: num_workers ({num_workers}) x len(gpu_perm) ({len(gpu_perm)}) "
                         f"must equal the number of tensors ({count})")
    chunks = []
    for device, tensor in zip(devices, tensors):
        with tf.device(device):
            split, pad = _pad_and_split(tensor, count * num_subchunks)
            chunks.append(split)
    outputs = [[None] * (count * num_subchunks) for _ in devices]
    for subchunk, ring in enumerate(_ring_orders(num_workers, num_subchunks, gpu_perm)):
        for segment in range(count):
            index = segment * num_subchunks + subchunk
            reduced = chunks[ring[(segment + 1) % count]][index]
            for step in range(2, count + 1):        # along the ring, ending at ring[segment]
                device = ring[(segment + step) % count]
                with tf.device(devices[device]):
                    reduced = red_op(reduced, chunks[device][index])
            if un_op:
                with tf.device(devices[ring[segment]]):
                    reduced = un_op(reduced)
            outputs[ring[segment]][index] = reduced
            for step in range(1, count):            # passed on round the ring
                device = ring[(segment + step) % count]
                with tf.device(devices[device]):
                    reduced = tf.identity(reduced)
                outputs[device][index] = reduced
    results = []
    for device, device_chunks in zip(devices, outputs):
        with tf.device(device):
            whole = tf.concat(device_chunks, 0)
            results.append(whole[:shape.num_elements()] if pad else whole)
    return _restore_shape(results, shape)


def _halving_pairs(count, rounds):
    """The (left, right) device-index pairs of each round of recursive halving."""
    for span in (2 ** hop for hop in rounds):
        yield [(left, left + span) for left in range(count) if left % (2 * span) < span]


def build_recursive_hd_all_reduce(input_tensors, red_op, un_op=None):
    """All-reduce by recursive halving and doubling (see the module); red_op takes two tensors."""
    tensors, shape = _flatten(input_tensors)
    devices = [tensor.device for tensor in tensors]
    count = len(devices)
    hops = int(math.log(count, 2))
    if count != 2 ** hops:
        raise ValueError(f"build_recursive_hd_all_reduce: the number of devices must be a power of 2, got {count}")
    if shape.num_elements() % count:
        raise ValueError(f"build_recursive_hd_all_reduce: the tensors' size {shape.num_elements()} must be a "
                         f"multiple of the number of devices {count}")
    chunks = tensors
    for pairs in _halving_pairs(count, range(hops)):
        halved = list(chunks)
        for left, right in pairs:
            left_halves, right_halves = tf.split(chunks[left], 2), tf.split(chunks[right], 2)
            with tf.device(devices[left]):
                halved[left] = red_op(left_halves[0], right_halves[0])
            with tf.device(devices[right]):
                halved[right] = red_op(left_halves[1], right_halves[1])
        chunks = halved
    if un_op:
        chunks = [un_op(chunk) for chunk in chunks]
    for pairs in _halving_pairs(count, reversed(range(hops))):
        doubled = list(chunks)
        for left, right in pairs:
            for index in (left, right):
                with tf.device(devices[index]):
                    doubled[index] = tf.concat([chunks[left], chunks[right]], 0)
        chunks = doubled
    return _restore_shape(chunks, shape)


def _uneven_split(tensor, pieces):
    """`tensor` (1-D) in `pieces` parts of length // pieces, the last taking the remainder."""
    length = tensor.shape.num_elements()
    size = length // pieces
    with _colocated(tensor):
        if size * pieces == length:
            return tf.split(tensor, pieces)
        return tf.split(tensor, [size] * (pieces - 1) + [length - size * (pieces - 1)])


def _shuffle_gather(tensors, gather_devices, red_op, un_op=None):
    parts = [_uneven_split(tensor, len(gather_devices)) for tensor in tensors]
    reduced = []
    for index, device in enumerate(gather_devices):
        with tf.device(device):
            value = red_op([split[index] for split in parts])
            reduced.append(un_op(value) if un_op else value)
    return reduced


def _shuffle_scatter(reduced, devices):
    results = []
    for device in devices:
        with tf.device(device):
            results.append(tf.concat(reduced, 0))
    return results


def build_shuffle_all_reduce(input_tensors, gather_devices, red_op, un_op=None):
    """All-reduce through gather devices (see the module); red_op takes a list of tensors (e.g. tf.add_n)."""
    tensors, shape = _flatten(input_tensors)
    reduced = _shuffle_gather(tensors, gather_devices, red_op, un_op)
    return _restore_shape(_shuffle_scatter(reduced, [tensor.device for tensor in tensors]), shape)


def _local_sum(tensors, red_op, un_op=None):
    """NCCL's all-sum of one worker's tensors, on the CPU path (see the module)."""
    if red_op not in _ADD_OPS:
        raise ValueError(f"build_nccl_all_reduce: NCCL reduces only with tf.add, got red_op {red_op!r}")
    with tf.device(tensors[0].device):
        total = tf.add_n(tensors)
    results = []
    for tensor in tensors:
        with tf.device(tensor.device):
            results.append(un_op(tf.identity(total)) if un_op else tf.identity(total))
    return results


def build_nccl_all_reduce(input_tensors, red_op, un_op=None):
    """All-reduce of one worker's tensors with NCCL's sum, red_op must be tf.add (see the module)."""
    return _local_sum(list(input_tensors), red_op, un_op)


def _by_task(tensors):
    """The tensors grouped by their device's (job, replica, task), in order of first appearance."""
    groups = collections.OrderedDict()
    for tensor in tensors:
        spec = tf.DeviceSpec.from_string(tensor.device)
        if spec.task is None:
            raise ValueError(f"all_reduce: device {tensor.device!r} of {tensor.name} names no task; the two-level "
                             f"builders need full device names (/job:<job>/replica:<r>/task:<t>/device:<type>:<i>)")
        groups.setdefault((spec.job or "localhost", spec.replica or 0, spec.task), []).append(tensor)
    return list(groups.values())


def _unless_single(tensors, builder, un_op):
    """builder(tensors) for two or more; for one, that one (with un_op applied)."""
    if len(tensors) > 1:
        return builder(tensors)
    if not un_op:
        return tensors
    results = []
    for tensor in tensors:
        with _colocated(tensor):
            results.append(un_op(tensor))
    return results


def _nccl_hybrid(input_tensors, red_op, upper_level):
    tensors, shape = _flatten(input_tensors)
    workers = _by_task(tensors)
    firsts = []
    for worker in workers:
        summed = _local_sum(worker, red_op)
        with tf.control_dependencies(summed), tf.device(summed[0].device):
            firsts.append(tf.identity(summed[0]))
    upper = upper_level(firsts)
    results = []
    for worker, value in zip(workers, upper):
        with tf.device(worker[0].device):
            source = tf.identity(value)
        for tensor in worker:
            with tf.device(tensor.device):
                results.append(tf.identity(source))
    return _restore_shape(results, shape)


def _shuffle_hybrid(input_tensors, gather_devices, red_op, upper_level):
    tensors, shape = _flatten(input_tensors)
    workers = _by_task(tensors)
    if len(gather_devices) != len(workers):
        raise ValueError(f"all_reduce: the shuffle first level needs one gather device per worker ({len(workers)}), "
                         f"got {len(gather_devices)}")
    firsts = [_shuffle_gather(worker, [device], red_op)[0] for worker, device in zip(workers, gather_devices)]
    upper = upper_level(firsts)
    results = []
    for worker, value in zip(workers, upper):
        results += _shuffle_scatter([value], [tensor.device for tensor in worker])
    return _restore_shape(results, shape)


def build_nccl_then_ring(input_tensors, subdiv, red_op, un_op=None):
    """NCCL within each worker, then a ring across the workers' first devices."""
    def ring(tensors):
        return build_ring_all_reduce(tensors, len(tensors), subdiv, [0], red_op, un_op)

    return _nccl_hybrid(input_tensors, red_op, lambda firsts: _unless_single(firsts, ring, un_op))


def build_nccl_then_recursive_hd(input_tensors, red_op, un_op=None):
    """NCCL within each worker, then recursive halving-doubling across the workers' first devices."""
    def halving_doubling(tensors):
        return build_recursive_hd_all_reduce(tensors, red_op, un_op)

    return _nccl_hybrid(input_tensors, red_op, lambda firsts: _unless_single(firsts, halving_doubling, un_op))


def build_nccl_then_shuffle(input_tensors, gather_devices, nccl_red_op, shuffle_red_op, un_op=None):
    """NCCL within each worker, then a shuffle all-reduce of the workers' values through gather_devices."""
    return _nccl_hybrid(input_tensors, nccl_red_op,
                        lambda firsts: build_shuffle_all_reduce(firsts, gather_devices, shuffle_red_op, un_op))


def build_shuffle_then_ring(input_tensors, gather_devices, subdiv, red_n_op, red_op, un_op=None):
    """A shuffle reduction within each worker (one gather device each), then a ring across the workers."""
    def ring(tensors):
        return build_ring_all_reduce(tensors, len(tensors), subdiv, [0], red_op, un_op)

    return _shuffle_hybrid(input_tensors, gather_devices, red_n_op,
                           lambda firsts: _unless_single(firsts, ring, un_op))


def build_shuffle_then_shuffle(input_tensors, first_gather_devices, second_gather_devices, red_op, un_op=None):
    """A shuffle reduction within each worker, then a shuffle all-reduce across the workers."""
    def shuffle(tensors):
        return build_shuffle_all_reduce(tensors, second_gather_devices, red_op, un_op)

    return _shuffle_hybrid(input_tensors, first_gather_devices, red_op,
                           lambda firsts: _unless_single(firsts, shuffle, un_op))
