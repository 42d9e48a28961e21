"""Dump files -> .npy, named as Ascend's converter (`msaccucmp.py convert`) names them.

`{op_type}.{op_name}.{task_id}.{timestamp}` becomes `{op_type}.{op_name}.{task_id}.{timestamp}.{input|output}.{i}.npy`
for each input and output. bfloat16 tensors are written as float32, as msaccucmp converts them (numpy has no
bfloat16 of its own). The Opdebug file of overflow detection becomes `....output.0.json`, the JSON msaccucmp
prints for it. Files that are not dumps are listed, not fatal: a dump folder also holds statistic.csv and the
overflow summary.
"""
import os
from dataclasses import dataclass, field

import numpy as np

from npu_bridge.debug import dumpdata

OPDEBUG_PREFIX = "Opdebug.Node_OpDebug."


@dataclass
class ConvertResult:
    written: list = field(default_factory=list)     # paths of the .npy / .json files written
    converted: list = field(default_factory=list)   # dump files read
    skipped: list = field(default_factory=list)     # (path, why) for files that are not dumps


def is_dump_name(name):
    """`{op_type}.{op_name}.{task_id}.{timestamp}`: four dot-separated parts, the last two numbers."""
    parts = name.split(".")
    return len(parts) == 4 and all(parts[:2]) and parts[2].isdigit() and parts[3].isdigit()


def dump_files(path):
    """The files under `path` (a dump file or a folder, searched recursively), sorted."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"npu-debug convert: -d {path}: no such dump file or folder")
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
        result.converted.append(path)
        if name.startswith(OPDEBUG_PREFIX):
            target = os.path.join(out_dir, f"{name}.output.0.json")
            with open(target, "wb") as f:
                f.write(message.output[0].data)
            result.written.append(target)
            continue
        for kind, tensors in (("input", message.input), ("output", message.output)):
            for index, tensor in enumerate(tensors):
                array = dumpdata.to_array(tensor)
                if array.dtype.name == "bfloat16":
                    array = array.astype(np.float32)
                target = os.path.join(out_dir, f"{name}.{kind}.{index}.npy")
                np.save(target, array)
                result.written.append(target)
    return result
