"""Two dumps compared op by op (`npu-debug compare -m MY_DUMP -g GOLDEN_DUMP`), as msaccucmp's `compare` does.

Either side is a dump file or folder in either layout dumpdata reads: one from an NPU, the emulation's, or the
emulation's float32 run (precision_mode must_keep_origin_dtype). Ops are matched by name (the DumpData op_name)
and each output compared with the golden's output of the same index, in the order my dump ran them (file
timestamps). The rows carry compare.py's keys, so the CSV, the `.vis` and the summary are those of a compared
step; what only a run can tell (local errors, source lines, which tensor feeds which op) is left empty. A
tensor whose shapes differ (an NPU layout such as NC1HWC0 against NHWC) is listed with the reason, not compared.
"""
import os

import numpy as np

from npu_bridge.debug import convert, dumpdata, metrics
from npu_bridge.debug.compare import StepComparison, shape_text
from npu_bridge.debug.overflow import abnormal, overflowed


def read_ops(path):
    """{op name: (op type, DumpData)} of the op dump files under `path`, in execution order (timestamp, task)."""
    found = []
    for file in convert.dump_files(path):
        name = os.path.basename(file)
        if not convert.is_dump_name(name) or name.startswith(convert.OPDEBUG_PREFIX):
            continue
        message = dumpdata.read(file)
        parts = name.split(".")
        found.append(((int(parts[-1]), int(parts[2])), message.op_name or parts[1], parts[0], message))
    return {op_name: (op_type, message) for _, op_name, op_type, message in sorted(found, key=lambda f: f[0])}


def _read_side(flag, path):
    try:
        return read_ops(path)
    except FileNotFoundError as error:
        raise FileNotFoundError(f"{flag} {error}") from None


def _data_type_name(tensor):
    return dumpdata.DATA_TYPE_NAMES.get(tensor.data_type, str(tensor.data_type))


def compare_dumps(my_path, golden_path):
    """(StepComparison, [(op name, why it was not compared)]); a ValueError when `my_path` holds no op dumps."""
    mine, golden = _read_side("-m", my_path), _read_side("-g", golden_path)
    if not mine:
        raise ValueError(f"-m {my_path}: no op dump files (named {{op_type}}.{{op_name}}.{{task_id}}.{{timestamp}})")
    rows, skipped = [], []
    for op_name, (op_type, message) in mine.items():
        if op_name not in golden:
            skipped.append((op_name, "not in the golden dump"))
            continue
        try:
            inputs = [dumpdata.to_array(t) for t in message.input]
            pairs = [(dumpdata.to_array(t), dumpdata.to_array(g), t, g)
                     for t, g in zip(message.output, golden[op_name][1].output)]
        except ValueError as error:
            skipped.append((op_name, str(error)))
            continue
        for index, pair in enumerate(pairs):
            rows.append(_row(len(rows), op_type, op_name, index, pair, inputs))
    step = os.path.basename(os.path.normpath(my_path))
    return StepComparison(int(step) if step.isdigit() else 0, [], rows), skipped


def _row(index, op_type, op_name, output_index, pair, inputs):
    mine, golden, tensor, truth = pair
    row = {"Index": index, "OpType": op_type, "NPUDump": op_name, "DataType_npu": _data_type_name(tensor),
           "Address": "NaN", "GroundTruth": op_name, "DataType_truth": _data_type_name(truth),
           "TensorIndex": f"{op_name}:output:{output_index}", "Shape": shape_text(mine.shape),
           "OverFlow": "YES" if abnormal(mine) else "NO", "overflow_origin": False, "LocalRelativeError": "",
           "LocalMaxAbsoluteError": "", "LocalOverFlow": "", "LocalThreshold": "", "SourceLine": "",
           "tensor": f"{op_name}:{output_index}", "inputs": [],
           "stats_npu": metrics.statistics(mine), "stats_truth": metrics.statistics(golden)}
    with np.errstate(over="ignore", invalid="ignore"):
        scores = metrics.compare_arrays(mine, golden)
    row["CompareFailReason"] = scores.pop("reason")
    row.update(scores)
    if row["OverFlow"] == "YES":
        row["overflow_origin"] = overflowed(inputs, [mine])
    return row
