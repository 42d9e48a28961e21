"""The top-level `hccl` package real scripts import answers like npu_bridge.hccl (here: one-rank jobs)."""
import re

import pytest

from npu_bridge.core.errors import NpuConfigError


def test_manage_api_answers_for_one_rank(monkeypatch):
    monkeypatch.delenv("RANK_SIZE", raising=False)
    from hccl.manage.api import get_local_rank_id, get_local_rank_size, get_rank_id, get_rank_size

    assert (get_rank_size(), get_rank_id(), get_local_rank_size(), get_local_rank_id()) == (1, 0, 1, 0)


def test_manage_api_refuses_multi_rank_jobs_without_a_rank_table(monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "8")
    monkeypatch.delenv("RANK_TABLE_FILE", raising=False)
    from hccl.manage.api import get_rank_size

    with pytest.raises(NpuConfigError, match="RANK_SIZE=8 but RANK_TABLE_FILE is not set"):
        get_rank_size()


@pytest.fixture
def one_rank(monkeypatch):
    monkeypatch.delenv("RANK_SIZE", raising=False)


def test_a_created_group_of_rank_0_answers_like_the_world_group(one_rank):
    import tensorflow as tf

    from hccl.manage.api import (
        create_group, destroy_group, get_group_rank_from_world_rank, get_rank_id, get_rank_size,
        get_world_rank_from_group_rank,
    )
    from npu_bridge.hccl import hccl_ops

    create_group("myGroup", 1, [0])
    try:
        assert (get_rank_size("myGroup"), get_rank_id("myGroup")) == (1, 0)
        assert get_world_rank_from_group_rank("myGroup", 0) == 0
        assert get_group_rank_from_world_rank(0, "myGroup") == 0
        with tf.Graph().as_default():
            hccl_ops.allreduce(tf.constant(1.0), "sum", group="myGroup")
        with pytest.raises(ValueError, match="already exists"):
            create_group("myGroup", 1, [0])
    finally:
        destroy_group("myGroup")
    with pytest.raises(ValueError, match="group 'myGroup' does not exist; create it with create_group"):
        get_rank_size("myGroup")


def test_groups_name_the_ranks_that_do_not_exist(one_rank):
    from hccl.manage.api import create_group, destroy_group, get_group_rank_from_world_rank, get_rank_id
    from npu_bridge.hccl import hccl_ops

    with pytest.raises(NpuConfigError, match=re.escape("create_group: rank 1 does not exist; the job has ranks 0..0")):
        create_group("pair", 2, [0, 1])
    with pytest.raises(ValueError, match="rank_num 3 differs from the 1 ids"):
        create_group("pair", 3, [0])
    with pytest.raises(ValueError, match="cannot be created"):
        create_group("hccl_world_group", 1, [0])
    with pytest.raises(ValueError, match="cannot be destroyed"):
        destroy_group("hccl_world_group")
    with pytest.raises(ValueError, match=re.escape("1 to 127 bytes (UTF-8)")):
        create_group("\u7ec4" * 43, 1, [0])                 # 43 characters, 129 bytes
    with pytest.raises(ValueError, match=re.escape("rank_ids [0, 0] names a rank twice")):
        create_group("dup", 2, [0, 0])
    with pytest.raises(NpuConfigError, match="rank 8 does not exist"):
        get_group_rank_from_world_rank(8, "hccl_world_group")
    with pytest.raises(ValueError, match="group 'never_made' does not exist"):
        get_rank_id("never_made")
    with pytest.raises(ValueError, match="hccl_ops.allreduce: group 'never_made' does not exist"):
        hccl_ops.allreduce(1.0, "sum", group="never_made")


def test_every_group_and_split_call_refuses_a_multi_rank_job_without_a_rank_table(monkeypatch):
    from hccl.manage.api import destroy_group, get_group_rank_from_world_rank, get_world_rank_from_group_rank
    from hccl.split.api import set_split_strategy_by_idx, set_split_strategy_by_size

    monkeypatch.setenv("RANK_SIZE", "8")
    monkeypatch.delenv("RANK_TABLE_FILE", raising=False)
    for name, call in (("destroy_group", lambda: destroy_group("g")),
                       ("get_world_rank_from_group_rank", lambda: get_world_rank_from_group_rank("g", 0)),
                       ("get_group_rank_from_world_rank", lambda: get_group_rank_from_world_rank(0, "g")),
                       ("set_split_strategy_by_idx", lambda: set_split_strategy_by_idx([1])),
                       ("set_split_strategy_by_size", lambda: set_split_strategy_by_size([100]))):
        with pytest.raises(NpuConfigError, match="RANK_SIZE=8 but RANK_TABLE_FILE is not set"):
            call()


def test_split_strategies_are_checked_as_the_real_api_checks_them(one_rank):
    from hccl.split.api import set_split_strategy_by_idx, set_split_strategy_by_size

    set_split_strategy_by_idx([20, 100, 159])
    set_split_strategy_by_size([60, 20, 20])
    with pytest.raises(ValueError, match="strictly ascending"):
        set_split_strategy_by_idx([100, 20])
    with pytest.raises(ValueError, match="at most 8 segments"):
        set_split_strategy_by_idx(list(range(9)))
    with pytest.raises(ValueError, match="non-empty python list"):
        set_split_strategy_by_idx((1, 2))
    with pytest.raises(ValueError, match="add up to 100, got 90"):
        set_split_strategy_by_size([60, 30])
    with pytest.raises(ValueError, match="every entry must be an int >= 0, got -5"):
        set_split_strategy_by_size([105, -5])
    with pytest.raises(ValueError, match="group 'g' does not exist"):
        set_split_strategy_by_idx([1], group="g")
