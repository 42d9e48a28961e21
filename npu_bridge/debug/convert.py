"""Dump files -> .npy, named as Ascend's converter (`msaccucmp.py convert`) names them.

`{op_type}.{op_name}.{task_id}[.{stream_id}].{timestamp}` becomes `{file name}.{input|output}.{i}.npy` for each
input and output. Dump files are read in the NPU's layout (from hardware or from npu_bridge) or as the bare
DumpData npu_bridge wrote before (dumpdata.read). Values are written as msaccucmp writes them: bfloat16 as
float32 (numpy has no bfloat16 of its own), a scalar as shape (1,), a tensor with no elements as float64 of its
shape. The Opdebug file of overflow detection becomes `....output.0.json`, the JSON msaccucmp writes for its
payload (opdebug.decode). Files that are not dumps are listed, not fatal: a dump folder also holds statistic.csv
and the overflow summary.
"""
import json
import os
from dataclasses import dataclass, field

import numpy as np

from npu_bridge.debug import dumpdata, opdebug

OPDEBUG_PREFIX = "Opdebug.Node_OpDebug."


@dataclass
class ConvertResult:
    written: list = field(default_factory=list)     # paths of the .npy / .json files written
    converted: list = field(default_factory=list)   # dump files read
    skipped: list = field(default_factory=list)     # (path, why) for files that are not dumps


def is_dump_name(name):
    """`{op_type}.{op_name}.{task_id}[.{stream_id}].{timestamp}`: four or five dot-separated parts, the ones after
    the op name numbers."""
    parts = name.split(".")
    return len(parts) in (4, 5) and all(parts[:2]) and all(part.isdigit() for part in parts[2:])


def as_msaccucmp_writes(array):
    """`array` as msaccucmp's converter saves it: bfloat16 as float32, a scalar as (1,), no elements as float64."""
    if array.size == 0:
        return np.zeros(array.shape, np.float64)
    if array.dtype.name == "bfloat16":
        array = array.astype(np.float32)
    return array.reshape(1) if array.ndim == 0 else array


def opdebug_json(message):
    """The JSON text of an Opdebug file: its binary payload decoded, or the JSON npu_bridge once wrote in its place."""
    payload = message.output[0].data if message.output else b""
    try:
        return json.dumps(opdebug.decode(payload), indent=4)
    except ValueError:
        if not _is_json(payload):
            raise
        return payload.decode()


def _is_json(payload):
    try:
        json.loads(payload)
    except ValueError:
        return False
    return True


def dump_files(path):
    """The files under `path` (a dump file or a folder, searched recursively), sorted."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path}: no such dump file or folder")
    return sorted(os.path.join(root, name) for root, _, names in os.walk(path) for name in names)


def convert(dump, out_dir):
    """Convert every dump file under `dump` (a file or folder) into `out_dir`; returns a ConvertResult."""
    files = dump_files(dump)
    os.makedirs(out_dir, exist_ok=True)
    result = ConvertResult()
    for path in files:
        name = os.path.basename(path)
        if not is_dump_name(name):
            result.skipped.append((path, "not named {op_type}.{op_name}.{task_id}.{timestamp}"))
            continue
        try:
            message = dumpdata.read(path)
        except ValueError as error:
            result.skipped.append((path, str(error)))
            continue
        if name.startswith(OPDEBUG_PREFIX):
            try:
                text = opdebug_json(message)
            except ValueError as error:
                result.skipped.append((path, str(error)))
                continue
            target = os.path.join(out_dir, f"{name}.output.0.json")
            with open(target, "w") as f:
                f.write(text)
            result.converted.append(path)
            result.written.append(target)
            continue
        result.converted.append(path)
        for kind, tensors in (("input", message.input), ("output", message.output)):
            for index, tensor in enumerate(tensors):
                target = os.path.join(out_dir, f"{name}.{kind}.{index}.npy")
                np.save(target, as_msaccucmp_writes(dumpdata.to_array(tensor)))
                result.written.append(target)
    return result
