"""The top-level `hccl` package real scripts import answers for one rank, like npu_bridge.hccl."""
import pytest

from npu_bridge.core.errors import NpuConfigError


def test_manage_api_answers_for_one_rank(monkeypatch):
    monkeypatch.delenv("RANK_SIZE", raising=False)
    from hccl.manage.api import get_local_rank_id, get_local_rank_size, get_rank_id, get_rank_size

    assert (get_rank_size(), get_rank_id(), get_local_rank_size(), get_local_rank_id()) == (1, 0, 1, 0)


def test_manage_api_refuses_multi_rank_jobs(monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "8")
    from hccl.manage.api import get_rank_size

    with pytest.raises(NpuConfigError, match="RANK_SIZE=8"):
        get_rank_size()
