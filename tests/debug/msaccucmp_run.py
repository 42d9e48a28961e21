"""Run mindstudio-probe's msaccucmp (`python msaccucmp_run.py convert|compare ...`) on npu_bridge's files.

msaccucmp decodes a dump file's header with CANN's closed `libascend_dump_parser.so` (ParseDumpProtoToJson),
which the wheel does not ship; that one call is replaced here by a protobuf decode of the same header (the JSON
it yields: field names as in the .proto, enums as numbers). Everything else is msaccucmp's own code.
"""
import importlib.util
import os
import struct
import sys

from google.protobuf import json_format


def _load_dumpdata():
    """npu_bridge's DumpData schema, loaded from its file: importing the package would start TensorFlow."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location("dumpdata", os.path.join(root, "npu_bridge", "debug", "dumpdata.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dumpdata = _load_dumpdata()
# Found, not imported: importing msprobe replaces sys.modules["tensorflow"] with TensorBoard's stub.
MSACCUCMP = os.path.join(importlib.util.find_spec("msprobe").submodule_search_locations[0], "msaccucmp")
sys.path.insert(0, MSACCUCMP)      # msaccucmp's modules import each other from its folder

from dump_parse import big_dump_data

_NUMBERS = ("size", "dump_time", "output_index")


def _as_numbers(value):
    """MessageToDict writes 64-bit integers as strings; the C decoder's JSON holds numbers."""
    if isinstance(value, dict):
        return {key: (int(item) if key in _NUMBERS else _as_numbers(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_numbers(item) for item in value]
    return value


def parse_header_to_json(self):
    with open(self.dump_file_path, "rb") as dump_file:
        blob = dump_file.read()
    (length,) = struct.unpack_from("<Q", blob)
    header = dumpdata.DumpData.FromString(blob[8:8 + length])
    self.dump_json_data = _as_numbers(json_format.MessageToDict(
        header, preserving_proto_field_name=True, use_integers_for_enums=True))


big_dump_data.BigDumpDataParser._parse_dump_to_json = parse_header_to_json

if __name__ == "__main__":
    import msaccucmp

    sys.argv = [os.path.join(MSACCUCMP, "msaccucmp.py"), *sys.argv[1:]]
    msaccucmp.main()
