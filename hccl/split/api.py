"""`hccl.split.api`: how the gradients of a step are cut into all-reduce segments (a tuning knob).

It decides how the NPU batches its transfers, not what they compute, so it changes nothing here; the arguments
are still checked as the real API checks them, so a list that would fail on the NPU fails here too.
"""
from npu_bridge.hccl.rank import WORLD_GROUP, check_group

_MAX_SEGMENTS = 8


def _check_list(values, what):
    if not isinstance(values, list) or not values:
        raise ValueError(f"{what}: expected a non-empty python list, got {values!r}")
    if len(values) > _MAX_SEGMENTS:
        raise ValueError(f"{what}: at most {_MAX_SEGMENTS} segments, got {len(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{what}: every entry must be an int >= 0, got {value!r}")


def set_split_strategy_by_idx(idxList, group=WORLD_GROUP):
    """Cut the gradients after the given gradient indices (ascending, at most 8 segments)."""
    check_group(group, "set_split_strategy_by_idx")
    _check_list(idxList, "set_split_strategy_by_idx")
    if any(later <= earlier for earlier, later in zip(idxList, idxList[1:])):
        raise ValueError(f"set_split_strategy_by_idx: idxList must be strictly ascending, got {idxList}")


def set_split_strategy_by_size(dataSizeList, group=WORLD_GROUP):
    """Cut the gradients into segments of the given percentages of their total size (they must add up to 100)."""
    check_group(group, "set_split_strategy_by_size")
    _check_list(dataSizeList, "set_split_strategy_by_size")
    if sum(dataSizeList) != 100:
        raise ValueError(f"set_split_strategy_by_size: the percentages must add up to 100, got {sum(dataSizeList)}")
