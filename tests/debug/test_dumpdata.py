"""The dump file: the committed .proto and the descriptor built in Python agree; values round-trip through the
NPU's file layout; a file built here from the layout's rules reads; the Opdebug payload's bytes."""
import json
import os
import pathlib
import re
import struct

import ml_dtypes
import numpy as np
import pytest
from google.protobuf import descriptor_pb2

from npu_bridge.debug import convert, dumpdata, opdebug

PROTO = os.path.join(os.path.dirname(dumpdata.__file__), "dump_data.proto")
_SCALARS = {"string": "TYPE_STRING", "bytes": "TYPE_BYTES", "uint32": "TYPE_UINT32", "uint64": "TYPE_UINT64"}


def parse_proto(text):
    """(package, {enum: {name: number}}, {message: {field: (number, type, repeated, type_name)}}) of a .proto."""
    text = re.sub(r"//[^\n]*", "", text)
    package = re.search(r"package\s+([\w.]+)\s*;", text).group(1)
    enums = {name: {v: int(n) for v, n in re.findall(r"(\w+)\s*=\s*(\d+)\s*;", body)}
             for name, body in re.findall(r"enum\s+(\w+)\s*\{([^}]*)\}", text)}
    messages = {}
    for name, body in re.findall(r"message\s+(\w+)\s*\{([^}]*)\}", text):
        fields = {}
        for repeated, kind, field, number in re.findall(r"(repeated\s+)?(\w+)\s+(\w+)\s*=\s*(\d+)\s*;", body):
            if kind in _SCALARS:
                fields[field] = (int(number), _SCALARS[kind], bool(repeated), "")
            else:
                fields[field] = (int(number), "TYPE_ENUM" if kind in enums else "TYPE_MESSAGE", bool(repeated),
                                 f".{package}.{kind}")
        messages[name] = fields
    return package, enums, messages


def test_committed_proto_and_runtime_descriptor_agree_field_by_field():
    with open(PROTO) as f:
        package, enums, messages = parse_proto(f.read())
    built = dumpdata.file_descriptor_proto()
    assert package == built.package == "toolkit.dumpdata"
    assert enums == {e.name: {v.name: v.number for v in e.value} for e in built.enum_type}
    field_type = descriptor_pb2.FieldDescriptorProto.Type.Name
    assert messages == {
        m.name: {f.name: (f.number, field_type(f.type), f.label == f.LABEL_REPEATED, f.type_name) for f in m.field}
        for m in built.message_type}
    # The numbers Ascend's readers depend on.
    assert enums["OutputDataType"]["DT_FLOAT16"] == 2 and enums["OutputDataType"]["DT_BF16"] == 27
    assert messages["DumpData"]["op_name"][0] == 6 and messages["OpOutput"]["data"][0] == 5


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int64, np.bool_])
def test_values_round_trip_through_the_wire_format(dtype):
    array = (np.arange(12) % 3 == 1 if dtype is np.bool_ else np.arange(12) - 5.5).astype(dtype).reshape(3, 4)
    message = dumpdata.DumpData(version="2.0", op_name="scope/op")
    dumpdata.fill(message.output.add(), array)
    back = dumpdata.DumpData.FromString(message.SerializeToString())
    restored = dumpdata.to_array(back.output[0])
    assert restored.dtype == array.dtype and restored.shape == (3, 4)
    assert np.array_equal(restored, array)
    assert back.output[0].size == array.nbytes and back.output[0].format == dumpdata.FORMAT["FORMAT_ND"]


def test_a_file_that_is_not_a_dump_is_named_in_the_error(tmp_path):
    path = tmp_path / "Add.a.0.1234567890123456"
    path.write_bytes(b"\xff\xff\xff not protobuf")
    with pytest.raises(ValueError, match="Add.a.0.1234567890123456: not a dump file"):
        dumpdata.read(str(path))


def test_a_written_dump_has_the_npus_layout_and_reads_back(tmp_path):
    inputs = [np.arange(6, dtype=np.float16).reshape(2, 3), np.array(7, np.int32)]
    outputs = [np.linspace(-1, 1, 4, dtype=np.float32), np.zeros((0, 2), np.int64)]
    message = dumpdata.DumpData(version="2.0", dump_time=1234567890123456, op_name="scope/op")
    for array in inputs:
        dumpdata.fill(message.input.add(), array)
    for array in outputs:
        dumpdata.fill(message.output.add(), array)
    path = dumpdata.write(str(tmp_path / "Add.scope_op.3.1234567890123456"), message)

    blob = pathlib.Path(path).read_bytes()
    (length,) = struct.unpack_from("<Q", blob)
    header = dumpdata.DumpData.FromString(blob[8:8 + length])
    assert [t.data for t in (*header.input, *header.output)] == [b""] * 4
    assert [t.size for t in header.input] == [12, 4] and [t.size for t in header.output] == [16, 0]
    assert blob[8 + length:] == b"".join(a.tobytes() for a in inputs + outputs)

    back = dumpdata.read(path)
    assert back.op_name == "scope/op" and back.dump_time == 1234567890123456
    for tensor, array in zip((*back.input, *back.output), inputs + outputs):
        restored = dumpdata.to_array(tensor)
        assert restored.dtype == array.dtype and restored.shape == array.shape and np.array_equal(restored, array)


def _tensor_header(field, data_type, dims, size):
    """One OpInput/OpOutput as protobuf wire bytes, built by hand: data_type = 1, format = 2 (ND), shape = 3,
    size (5 in OpInput, 6 in OpOutput); no data field."""
    def varint(value):
        out = bytearray()
        while True:
            byte, value = value & 0x7F, value >> 7
            out.append(byte | (0x80 if value else 0))
            if not value:
                return bytes(out)

    shape = b"".join(b"\x08" + varint(d) for d in dims)
    size_tag = 0x28 if field == 4 else 0x30
    body = b"\x08" + varint(data_type) + b"\x10\x02" + b"\x1a" + varint(len(shape)) + shape + \
        bytes([size_tag]) + varint(size)
    return bytes([(field << 3) | 2]) + varint(len(body)) + body


def test_convert_reads_a_file_built_from_the_layouts_rules(tmp_path, capsys):
    """A dump as the NPU writes it, assembled byte by byte from the format's rules (not by npu_bridge's writer):
    header length, header (op_name, one float16 input, a float32 output and a float32 scalar output), raw data
    in field order (inputs, then outputs)."""
    from npu_bridge.debug.cli import main

    x = np.array([[1.5, -2.0], [65504.0, 0.25]], np.float16)
    y = np.array([3.0, 4.0, 5.0], np.float32)
    scalar = np.array(0.5, np.float32)
    op_name = b"block/conv"
    header = (b"\x0a\x032.0" + bytes([0x32, len(op_name)]) + op_name + _tensor_header(4, 2, (2, 2), x.nbytes)
              + _tensor_header(3, 1, (3,), y.nbytes) + _tensor_header(3, 1, (), scalar.nbytes))
    dump = tmp_path / "dump" / "0"
    dump.mkdir(parents=True)
    name = "Conv2D.block_conv.5.0.1700000000000001"     # task 5, stream 0, as hardware names files
    (dump / name).write_bytes(struct.pack("<Q", len(header)) + header + x.tobytes() + y.tobytes()
                              + scalar.tobytes())
    assert main(["convert", "-d", str(tmp_path / "dump"), "-out", str(tmp_path / "npy")]) == 0
    assert "converted 1 dump files" in capsys.readouterr().out
    restored = {kind: np.load(tmp_path / "npy" / f"{name}.{kind}.npy") for kind in ("input.0", "output.0", "output.1")}
    assert restored["input.0"].dtype == np.float16 and np.array_equal(restored["input.0"], x)
    assert np.array_equal(restored["output.0"], y)
    assert restored["output.1"].shape == (1,) and restored["output.1"][0] == 0.5     # msaccucmp's scalar


def test_convert_still_reads_the_bare_protobuf_npu_bridge_wrote_before(tmp_path):
    message = dumpdata.DumpData(version="2.0", op_name="a")
    dumpdata.fill(message.output.add(), np.array([1.0, 2.0], np.float32))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "Add.a.0.1700000000000001").write_bytes(message.SerializeToString())
    result = convert.convert(str(tmp_path / "d"), str(tmp_path / "npy"))
    assert not result.skipped
    assert np.array_equal(np.load(tmp_path / "npy" / "Add.a.0.1700000000000001.output.0.npy"), [1.0, 2.0])


def test_values_are_saved_as_msaccucmp_saves_them():
    assert convert.as_msaccucmp_writes(np.array(3, np.int32)).shape == (1,)
    empty = convert.as_msaccucmp_writes(np.zeros((0, 4), np.int32))
    assert empty.dtype == np.float64 and empty.shape == (0, 4)
    half = convert.as_msaccucmp_writes(np.array([1.5], ml_dtypes.bfloat16))
    assert half.dtype == np.float32 and half[0] == 1.5


def test_opdebug_payload_bytes_follow_the_npus_layout():
    payload = opdebug.encode(model_id=3, task_id=17)
    assert len(payload) == 2048

    def u64(offset):
        return struct.unpack_from("<Q", payload, offset)[0]

    # DHA and L2 Atomic Add info blocks at 0 and 128: model_id, stream_id, task_id, task_type, pc, para.
    assert [u64(0 + 8 * i) for i in range(6)] == [3, 0, 0, 0, 0, 0]
    assert [u64(128 + 8 * i) for i in range(6)] == [3, 0, 0, 0, 0, 0]
    # AI Core info at 256 names the overflowing task; its status (0x20, float overflow) is the third u64 at 1024.
    assert [u64(256 + 8 * i) for i in range(6)] == [3, 0, 17, 0, 0, 0]
    assert u64(512) == 0 and u64(768) == 0
    assert [u64(1024), u64(1032), u64(1040)] == [0, 0, 0x20]
    assert len(payload) - payload.count(0) == 5     # nothing else is set

    decoded = opdebug.decode(payload)
    assert decoded["AI Core"] == {"model_id": 3, "stream_id": 0, "task_id": 17, "task_type": 0, "pc_start": "0x0",
                                  "para_base": "0x0", "kernel_code": "0x0", "block_idx": 0, "status": 0x20}
    assert decoded["DHA Atomic Add"]["status"] == decoded["L2 Atomic Add"]["status"] == 0
    with pytest.raises(ValueError, match="363 bytes where the NPU's layout has 2048"):
        opdebug.decode(json.dumps(decoded).encode()[:363].ljust(363))


def new_layout_payload(task_id=9, statuses=(0x20, 0, 0, 0)):
    """An Opdebug payload in the newer layout, by its rules: u32 magic, version 1, then one AI Core record
    (u32 valid, acc_type 0, rsv, data_len) and its u64 fields from byte 24, the status four u64 wide."""
    fields = (2, 0, task_id, 0, 0, 0, 0x1000, 0x2000, 3, 1, *statuses)
    return struct.pack("<6I", 0x5A5A5A5A, 1, 1, 0, 0, 8 * len(fields)) + struct.pack(f"<{len(fields)}Q", *fields)


def test_opdebug_payload_of_the_newer_layout_decodes():
    decoded = opdebug.decode(new_layout_payload())
    assert decoded == {"magic": "0x5a5a5a5a", "version": 1, "acc_list": {
        "valid": 1, "acc_type": "AIC", "rsv": 0, "data_len": 112, "data": {
            "model_id": 2, "stream_id": 0, "task_id": 9, "task_type": 0, "context_id": 0, "thread_id": 0,
            "pc_start": "0x1000", "para_base": "0x2000", "core_id": 3, "block_id": 1, "status": [0x20, 0, 0, 0]}}}
    with pytest.raises(ValueError, match="needs 136"):
        opdebug.decode(new_layout_payload()[:100])
