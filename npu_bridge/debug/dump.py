"""Data dump (enable_dump): the run observer writing what the emulated NPU computed at the chosen steps.

At a step dump_step selects (every step when unset), `before_step` names the inner tensors holding the inputs
and/or outputs (dump_mode) of every user op the step runs (dump_layer: only the ops named there), and
`after_step` writes one DumpData file per op (dump_data "tensor"), or one row per tensor into the step folder's
statistic.csv (dump_data "stats"). Other steps fetch nothing extra.
"""
import csv
import os
import weakref

import numpy as np

from npu_bridge.core.options import config_warning
from npu_bridge.debug import dumpdata, layout
from npu_bridge.debug.tensors import plan_ops
from npu_bridge.runtime.observers import RunObserver

DUMP_VERSION = "2.0"
STATS_FILE = "statistic.csv"
STATS_COLUMNS = ("Op Type", "Op Name", "Task ID", "Stream ID", "Timestamp", "Input/Output", "Slot", "Data Size",
                 "Data Type", "Format", "Shape", "Max Value", "Min Value", "Avg Value", "Count", "Nan Count",
                 "Negative Inf Count", "Positive Inf Count")


class StepTensors:
    """The DumpOps of each plan a session runs, computed once per plan (plans are cached by the runtime)."""

    def __init__(self, layers=(), casts=False):
        self.layers = layers
        self.casts = casts
        self._ops = weakref.WeakKeyDictionary()
        self._layers_checked = False

    def ops(self, emulation, plan):
        ops = self._ops.get(plan)
        if ops is None:
            if self.layers and not self._layers_checked:
                self._layers_checked = True
                warn_unknown_layers(emulation, self.layers)
            ops = self._ops[plan] = plan_ops(emulation, plan, self.layers, self.casts)
        return ops


def fetch_names(plan, ops, inputs=True, outputs=True):
    """The inner tensors to fetch for `ops`: all but the fed ones (a tensor cannot be both; see step_values)."""
    fed = set(plan.feed_names)
    names = []
    for op in ops:
        for tensor in (op.inputs if inputs else ()) + (op.outputs if outputs else ()):
            if tensor.inner not in fed:
                names.append(tensor.inner)
    return names


def step_values(record):
    """Inner tensor name -> value of one step: the fetched extras and the fed values."""
    return {**record.feeds, **record.extra}


def write_op(folder, op, values, timestamp, inputs=True, outputs=True):
    """One dump file (the NPU's layout, dumpdata.write) for `op` from the step's `values` (inner name -> array);
    returns its path."""
    message = dumpdata.DumpData(version=DUMP_VERSION, dump_time=timestamp, op_name=op.name)
    for tensor in op.inputs if inputs else ():
        dumpdata.fill(message.input.add(), values[tensor.inner], tensor.data_format)
    for tensor in op.outputs if outputs else ():
        output = dumpdata.fill(message.output.add(), values[tensor.inner], tensor.data_format)
        output.original_op.name = op.name
        output.original_op.output_index = tensor.index
        output.original_op.data_type = output.data_type
        output.original_op.format = output.format
    return dumpdata.write(os.path.join(folder, layout.file_name(op.file_type, op.name, op.task_id, timestamp)),
                          message)


def stats_row(op, kind, tensor, array, timestamp):
    """One statistic.csv row: the tensor's size, type, shape and value statistics (NaN/Inf counted apart).

    Every dumpable dtype is numeric or bool; complex values are summarized by their magnitude.
    """
    array = np.asarray(array)
    values = np.abs(array) if array.dtype.kind == "c" else array.astype(np.float64)
    finite = values[np.isfinite(values)]
    summary = (finite.max(), finite.min(), finite.mean()) if finite.size else ("", "", "")
    return (op.file_type, op.name, op.task_id, 0, timestamp, kind, tensor.index, array.nbytes,
            dumpdata.data_type_name(array.dtype), tensor.data_format, "(" + ",".join(map(str, array.shape)) + ")",
            *summary, array.size, int(np.isnan(values).sum()), int(np.isneginf(values).sum()),
            int(np.isposinf(values).sum()))


def write_stats(folder, ops, values, timestamp, inputs=True, outputs=True):
    path = os.path.join(folder, STATS_FILE)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(STATS_COLUMNS)
        for op in ops:
            for kind, tensors in (("Input", op.inputs if inputs else ()), ("Output", op.outputs if outputs else ())):
                for tensor in tensors:
                    writer.writerow(stats_row(op, kind, tensor, values[tensor.inner], timestamp))
    return path


class DumpWriter(RunObserver):
    """enable_dump for one emulated session."""

    def __init__(self, emulation):
        self.options = emulation.options.dump
        self.models = layout.Models(self.options.dump_path, emulation.options)
        self.tensors = StepTensors(self.options.dump_layer)
        self.inputs = self.options.dump_mode in ("input", "all")
        self.outputs = self.options.dump_mode in ("output", "all")

    def selected(self, step):
        steps = self.options.dump_step
        return steps is None or any(first <= step <= last for first, last in steps)

    def before_step(self, emulation, plan, step):
        self.models.model(plan.signature)       # model ids follow the order graphs first run, dumped or not
        if not self.selected(step):
            return ()
        return fetch_names(plan, self.tensors.ops(emulation, plan), self.inputs, self.outputs)

    def after_step(self, record):
        if not self.selected(record.step):
            return
        ops = self.tensors.ops(record.emulation, record.plan)
        values = step_values(record)
        folder = None
        try:
            folder = self.models.step_dir(record.plan.signature, record.step)
            if self.options.dump_data == "stats":
                write_stats(folder, ops, values, layout.timestamp_us(), self.inputs, self.outputs)
                return
            for op in ops:
                if (self.inputs and op.inputs) or (self.outputs and op.outputs):
                    write_op(folder, op, values, layout.timestamp_us(), self.inputs, self.outputs)
        except OSError as err:
            raise DumpWriteError(err, folder, self.options.dump_path, record.step) from None


class DumpWriteError(OSError):
    """A dump file could not be written (a full disk, a quota): names the file or folder, the step and dump_path."""

    def __init__(self, error, folder, dump_path, step):
        where = error.filename or folder or dump_path
        super().__init__(error.errno, f"enable_dump: cannot write the dump of step {step} to '{where}' "
                                      f"(dump_path '{dump_path}'): {error.strerror or error}", where)

    def __str__(self):
        return self.strerror


def warn_unknown_layers(emulation, layers):
    """dump_layer names the graph does not have dump nothing, on the NPU silently: say so once per session."""
    graph = emulation.graph
    missing = [name for name in layers if not _has_op(graph, name)]
    if missing:
        config_warning(f"dump_layer names {', '.join(repr(name) for name in missing[:5])}"
                       f"{f' and {len(missing) - 5} more' if len(missing) > 5 else ''}, which the graph does not "
                       "have: nothing is dumped for them (the real adapter dumps nothing, silently). dump_layer takes "
                       "op names as the graph has them, separated by spaces.", strict=emulation.options.settings.strict)


def _has_op(graph, name):
    try:
        graph.get_operation_by_name(name)
    except (KeyError, ValueError):
        return False
    return True
