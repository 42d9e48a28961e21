"""graph_editor.reroute: TF 1.15's rewiring of consumers from one tensor to another, in place."""
from npu_bridge import tf_private
from npu_bridge.tf1compat.contrib.graph_editor import util


def _check_compatible(ts0, ts1):
    if len(ts0) != len(ts1):
        raise ValueError(f"reroute: ts0 and ts1 have different sizes: {len(ts0)} != {len(ts1)}")
    for t0, t1 in zip(ts0, ts1):
        if not t0.dtype.is_compatible_with(t1.dtype):
            raise ValueError(f"reroute: {t0.name} and {t1.name} have incompatible dtypes {t0.dtype} and {t1.dtype}")
        if not t0.get_shape().is_compatible_with(t1.get_shape()):
            raise ValueError(f"reroute: {t0.name} and {t1.name} have incompatible shapes {t0.get_shape()} and "
                             f"{t1.get_shape()}")


def _reroute(t0, t1, consumers1, can_modify, cannot_modify):
    """Feed t0 to the consumers of t1 (restricted); the number of inputs changed."""
    if can_modify is not None:
        consumers1 &= can_modify
    if cannot_modify is not None:
        consumers1 -= cannot_modify
    changed = 0
    for consumer in consumers1:
        for index in [i for i, t in enumerate(consumer.inputs) if t is t1]:
            tf_private.update_input(consumer, index, t0)
            changed += 1
    return changed


def _reroute_ts(ts0, ts1, forward, backward, can_modify, cannot_modify):
    ts0, ts1 = util.make_list_of_t(ts0), util.make_list_of_t(ts1)
    _check_compatible(ts0, ts1)
    can_modify = None if can_modify is None else set(util.make_list_of_op(can_modify))
    cannot_modify = None if cannot_modify is None else set(util.make_list_of_op(cannot_modify))
    consumers = [(set(t0.consumers()), set(t1.consumers())) for t0, t1 in zip(ts0, ts1)]   # before any change
    changed = 0
    for t0, t1, (consumers0, consumers1) in zip(ts0, ts1, consumers):
        if t0 is t1:
            continue
        if forward:
            changed += _reroute(t0, t1, consumers1, can_modify, cannot_modify)
        if backward:
            changed += _reroute(t1, t0, consumers0, can_modify, cannot_modify)
    return changed


def reroute_ts(ts0, ts1, can_modify=None, cannot_modify=None):
    """For each pair, the consumers of ts1[i] (those in can_modify, none in cannot_modify) consume ts0[i]
    instead; returns the number of inputs changed."""
    return _reroute_ts(ts0, ts1, True, False, can_modify, cannot_modify)


def swap_ts(ts0, ts1, can_modify=None, cannot_modify=None):
    """For each pair, the consumers of ts0[i] and of ts1[i] swap their inputs; returns the number changed."""
    return _reroute_ts(ts0, ts1, True, True, can_modify, cannot_modify)


add_control_inputs = util.add_control_inputs
