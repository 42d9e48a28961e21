"""RANK_TABLE_FILE: the JSON file that tells HCCL which ranks exist and where (format version 1.0).

    {"version": "1.0", "status": "completed", "server_count": "1",
     "server_list": [{"server_id": "127.0.0.1", "host_nic_ip": "reserve",
                      "device": [{"device_id": "0", "device_ip": "127.0.0.1", "rank_id": "0"}, ...]}]}

Numbers are strings, as real tables write them. server_id is the host's address: every rank of a server runs
there. On the NPU device_ip is the device's own network port; here the ranks talk through the host, so it is
written for tools that read the table and otherwise not used.
"""
import json
from dataclasses import dataclass

from npu_bridge.core.errors import NpuConfigError

VERSION = "1.0"


@dataclass(frozen=True)
class RankEntry:
    rank_id: int
    device_id: int
    device_ip: str
    server_id: str
    server_index: int      # which server_list entry the rank belongs to


@dataclass(frozen=True)
class RankTable:
    path: str
    ranks: tuple           # RankEntry, ordered by rank_id (0 .. size-1)

    @property
    def size(self):
        return len(self.ranks)

    def local_ranks(self, rank_id):
        """Rank ids on the same server as `rank_id`, in table order."""
        server = self.ranks[rank_id].server_index
        return [entry.rank_id for entry in self.ranks if entry.server_index == server]


def _int_field(path, where, record, key):
    value = record.get(key)
    if value is None:
        raise NpuConfigError(f"rank table {path}: {where} has no {key!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise NpuConfigError(f"rank table {path}: {where} {key}={value!r} is not an integer") from None
    if number < 0:
        raise NpuConfigError(f"rank table {path}: {where} {key}={value!r} must be >= 0")
    return number


def load_rank_table(path):
    """Read and check the rank table at `path`; errors name the file, the entry and the key."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise NpuConfigError(f"RANK_TABLE_FILE={path}: cannot read the rank table ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise NpuConfigError(f"rank table {path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise NpuConfigError(f"rank table {path}: expected a JSON object with 'server_list'")
    version = data.get("version")
    if version != VERSION:
        raise NpuConfigError(f"rank table {path}: version {version!r} is not supported, expected {VERSION!r} "
                             "(server_list / device / rank_id layout)")
    status = data.get("status", "completed")
    if status != "completed":
        raise NpuConfigError(f"rank table {path}: status is {status!r}, expected 'completed'")
    servers = data.get("server_list")
    if not isinstance(servers, list) or not servers:
        raise NpuConfigError(f"rank table {path}: 'server_list' must be a non-empty list")
    if "server_count" in data and _int_field(path, "the table", data, "server_count") != len(servers):
        raise NpuConfigError(f"rank table {path}: server_count={data['server_count']!r} but server_list has "
                             f"{len(servers)} entries")
    entries = {}
    for index, server in enumerate(servers):
        where = f"server_list[{index}]"
        if not isinstance(server, dict) or not isinstance(server.get("server_id"), str):
            raise NpuConfigError(f"rank table {path}: {where} needs a 'server_id' string (the host's address)")
        devices = server.get("device")
        if not isinstance(devices, list) or not devices:
            raise NpuConfigError(f"rank table {path}: {where} needs a non-empty 'device' list")
        for position, device in enumerate(devices):
            device_where = f"{where}.device[{position}]"
            if not isinstance(device, dict):
                raise NpuConfigError(f"rank table {path}: {device_where} must be an object")
            rank_id = _int_field(path, device_where, device, "rank_id")
            if rank_id in entries:
                raise NpuConfigError(f"rank table {path}: rank_id {rank_id} appears twice ({device_where})")
            entries[rank_id] = RankEntry(rank_id, _int_field(path, device_where, device, "device_id"),
                                         str(device.get("device_ip", "")), server["server_id"], index)
    missing = sorted(set(range(len(entries))) - set(entries))
    if missing:
        raise NpuConfigError(f"rank table {path}: rank ids must be 0..{len(entries) - 1}, missing {missing}")
    return RankTable(path, tuple(entries[rank] for rank in range(len(entries))))


def rank_table_json(size, address="127.0.0.1"):
    """A one-server table of `size` ranks on `address` (rank r on device r), as the launcher writes it."""
    devices = [{"device_id": str(rank), "device_ip": address, "rank_id": str(rank)} for rank in range(size)]
    table = {"server_count": "1",
             "server_list": [{"device": devices, "host_nic_ip": "reserve", "server_id": address}],
             "status": "completed", "version": VERSION}
    return json.dumps(table, indent=4)
