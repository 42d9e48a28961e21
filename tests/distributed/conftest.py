"""A four-rank job's environment (rank 2) for in-process tests: nothing is started, only read."""
import pytest

from npu_bridge.distributed.rank_table import rank_table_json


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "rank_table.json"
    path.write_text(rank_table_json(4))
    return path


@pytest.fixture
def job_env(monkeypatch, table):
    for name in ("DEVICE_ID", "ASCEND_DEVICE_ID", "HCCL_IF_BASE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK_TABLE_FILE", str(table))
    monkeypatch.setenv("RANK_SIZE", "4")
    monkeypatch.setenv("RANK_ID", "2")
    return monkeypatch
