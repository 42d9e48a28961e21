"""Rank tables and the job the environment describes: every inconsistency is a clear error before any server
starts (in-process, no TensorFlow server is started here)."""
import json
import socket

import pytest

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed import cluster
from npu_bridge.distributed.job import current_job
from npu_bridge.distributed.rank_table import load_rank_table


def test_the_launcher_table_has_the_real_version_1_0_layout(table):
    data = json.loads(table.read_text())
    assert data["version"] == "1.0" and data["status"] == "completed" and data["server_count"] == "1"
    server, = data["server_list"]
    assert server["server_id"] == "127.0.0.1"
    assert server["device"][3] == {"device_id": "3", "device_ip": "127.0.0.1", "rank_id": "3"}
    assert [entry.rank_id for entry in load_rank_table(str(table)).ranks] == [0, 1, 2, 3]


def test_the_job_reads_rank_size_rank_id_and_the_table(job_env):
    job = current_job()
    assert (job.rank, job.size, job.base_port) == (2, 4, 60000)
    assert job.address(3) == "127.0.0.1:60003"
    assert job.device() == "/job:worker/replica:0/task:2/device:CPU:0"


@pytest.mark.parametrize("env, message", [
    ({"RANK_SIZE": "2"}, "RANK_SIZE=2 but rank table .* lists 4 ranks"),
    ({"RANK_ID": "4"}, "RANK_ID=4 does not exist in rank table"),
    ({"RANK_ID": ""}, "RANK_ID is not set"),
    ({"RANK_TABLE_FILE": ""}, "RANK_SIZE=4 but RANK_TABLE_FILE is not set"),
    ({"DEVICE_ID": "5"}, "The ranktable config devId is inconsistent with the local devId: .* rank 2 on device_id 2, "
                         "but DEVICE_ID=5"),
    ({"HCCL_IF_BASE_PORT": "65534"}, "HCCL_IF_BASE_PORT=65534: ports 65534..65537"),
])
def test_inconsistent_environments_are_refused(job_env, env, message):
    for name, value in env.items():
        job_env.setenv(name, value)
    with pytest.raises(NpuConfigError, match=message):
        current_job()


@pytest.mark.parametrize("edit, message", [
    (lambda t: t["server_list"][0]["device"][1].update(rank_id="0"), "rank_id 0 appears twice"),
    (lambda t: t.update(version="1.2"), "version '1.2' is not supported"),
    (lambda t: t.update(server_count="2"), "server_count='2' but server_list has 1 entries"),
    (lambda t: t["server_list"][0]["device"][2].update(rank_id="7"), r"rank ids must be 0..3, missing \[2\]"),
    (lambda t: t["server_list"][0]["device"][0].pop("device_id"), r"server_list\[0\].device\[0\] has no 'device_id'"),
])
def test_malformed_rank_tables_name_the_entry(job_env, table, edit, message):
    data = json.loads(table.read_text())
    edit(data)
    table.write_text(json.dumps(data))
    with pytest.raises(NpuConfigError, match=message):
        current_job()


def test_a_server_id_of_another_machine_is_refused(job_env, table):
    data = json.loads(table.read_text())
    data["server_list"][0]["server_id"] = "192.0.2.10"       # TEST-NET: never an address of this machine
    table.write_text(json.dumps(data))
    with pytest.raises(NpuConfigError, match="server_id '192.0.2.10' .* is not an address of this machine"):
        cluster.ensure_server(current_job())


def test_a_port_in_use_suggests_a_duplicate_rank_id(job_env):
    holder = socket.socket()
    holder.bind(("", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        job_env.setenv("HCCL_IF_BASE_PORT", str(port - 2))
        with pytest.raises(NpuConfigError, match=f"rank 2: port {port} .* already in use: another process started "
                                                 "with RANK_ID=2 \\(a duplicate RANK_ID\\)"):
            cluster.ensure_server(current_job())
    finally:
        holder.close()
