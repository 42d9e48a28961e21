"""The DumpData schema: the committed .proto and the descriptor built in Python agree; values round-trip."""
import os
import re

import ml_dtypes
import numpy as np
import pytest
from google.protobuf import descriptor_pb2

from npu_bridge.debug import dumpdata

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
    with pytest.raises(ValueError, match="Add.a.0.1234567890123456: not a DumpData"):
        dumpdata.read(str(path))
