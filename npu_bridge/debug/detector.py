"""Overflow detection (enable_dump_debug): the run observer finding, per step, the ops that overflowed.

Every step fetches the inputs and outputs of every user op it runs (and of the Casts narrowing float32 tensors
to float16, which overflow on the NPU as Cast tasks: tensors.plan_ops) and applies the overflow rule
(npu_bridge.debug.overflow) in execution order (a topological order of the inner graph, see tensors.py). A step
with overflows gets, in its dump folder (the data dump's layout):
- a dump file (inputs and outputs) of each of the first DUMPED_OPS overflowing ops, as the NPU writes them (an
  overflow spreads: later ops of a diverged step add files, not information; $NPU_BRIDGE_OVERFLOW_DUMPS=all
  or =N asks for more);
- `Opdebug.Node_OpDebug.{task_id}.{timestamp}`: a dump file whose one uint8 output is the NPU's 2048-byte status
  payload (npu_bridge.debug.opdebug), the AI Core status 0x20 (floating-point overflow) naming the first
  overflowing op's task, as the hardware reports it;
- `overflow_summary.json`: every overflowing op in order, with its types, dtypes and the user's source line;
and one warning line naming the first overflowing op, its type, dtype and the line of user code that created it.
A Cast the pass inserted is named as the user sees it: "the Cast the NPU inserts before `truediv_2`", with the
line of `truediv_2`.
dump_debug_mode aicore_overflow, atomic_overflow and all apply the same rule: the emulator has no atomic units.
"""
import json
import os

import numpy as np
from tensorflow.python.platform import tf_logging

from npu_bridge.core.contract import is_pass_node
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.debug import dumpdata, layout, opdebug
from npu_bridge.debug.dump import DUMP_VERSION, StepTensors, fetch_names, step_values, write_op
from npu_bridge.debug.overflow import abnormal, overflowed
from npu_bridge.debug.stepgraph import source_line
from npu_bridge.runtime.observers import RunObserver

SUMMARY_FILE = "overflow_summary.json"
DUMPED_OPS = 3
DUMPS_ENV = "NPU_BRIDGE_OVERFLOW_DUMPS"


def dumped_ops():
    """How many overflowing ops of a step get a dump file: DUMPED_OPS, or $NPU_BRIDGE_OVERFLOW_DUMPS (a count, or
    "all"); a value that is neither is refused by name."""
    value = os.environ.get(DUMPS_ENV, "").strip()
    if not value:
        return DUMPED_OPS
    if value.lower() == "all":
        return None
    if value.isdigit():
        return int(value)
    raise NpuConfigError(f"${DUMPS_ENV}={value!r}: expected a number of overflowing ops to dump per step, or 'all'")


def find_overflows(ops, values):
    """The DumpOps (in order) whose fetched outputs overflowed from finite inputs; `values`: inner name -> array."""
    return [op for op in ops
            if overflowed([values[t.inner] for t in op.inputs], [values[t.inner] for t in op.outputs])]


def describe(op, values, inner_graph=None, user_graph=None):
    """What the summary and the warning say about one overflowing op (`user`: its name as the user knows it)."""
    dtypes = [np.asarray(values[t.inner]).dtype.name for t in op.outputs if abnormal(values[t.inner])]
    user, source = f"'{op.name}'", source_line(op.user_op) if op.user_op else ""
    reader = _reader(op.name, inner_graph) if is_pass_node(op.name) else None
    if reader is not None:
        user = f"the Cast the NPU inserts before '{reader}'"
        reading = _user_op(user_graph, reader)
        source = source_line(reading) if reading is not None else source
    return {"op_name": op.name, "user_op": user, "op_type": op.tf_type, "ir_type": op.ir_type,
            "task_id": op.task_id, "dtype": dtypes[0] if dtypes else "", "source": source}


def _reader(name, inner_graph):
    """The first op not added by the pass that reads the output of pass node `name` (through clamps), or None."""
    if inner_graph is None:
        return None
    try:
        frontier = [inner_graph.get_operation_by_name(name)]
    except KeyError:
        return None
    seen = set()
    while frontier:
        op = frontier.pop(0)
        for consumer in (c for t in op.outputs for c in t.consumers()):
            if consumer.name in seen:
                continue
            seen.add(consumer.name)
            if not is_pass_node(consumer.name):
                return consumer.name
            frontier.append(consumer)
    return None


def _user_op(user_graph, name):
    if user_graph is None:
        return None
    try:
        return user_graph.get_operation_by_name(name)
    except KeyError:
        return None


class OverflowDetector(RunObserver):
    """enable_dump_debug for one emulated session; `steps` keeps (model_id, step, [descriptions]) per overflow."""

    def __init__(self, emulation):
        self.models = layout.Models(emulation.options.dump.dump_path, emulation.options)
        self.tensors = StepTensors(casts=True)
        self.dumped = dumped_ops()
        self.steps = []

    def before_step(self, emulation, plan, step):
        self.models.model(plan.signature)       # model ids follow the order graphs first run
        return fetch_names(plan, self.tensors.ops(emulation, plan))

    def after_step(self, record):
        ops = self.tensors.ops(record.emulation, record.plan)
        values = step_values(record)
        found = find_overflows(ops, values)
        if not found:
            return
        model_name, model_id = self.models.model(record.plan.signature)
        folder = self.models.step_dir(record.plan.signature, record.step)
        for op in found[:self.dumped]:
            write_op(folder, op, values, layout.timestamp_us())
        described = [describe(op, values, record.plan.program.graph, record.emulation.graph) for op in found]
        write_opdebug(folder, model_id, found[0].task_id)
        with open(os.path.join(folder, SUMMARY_FILE), "w") as f:
            json.dump({"model_name": model_name, "model_id": model_id, "step": record.step,
                       "overflowing_ops": len(found), "dumped_ops": len(found[:self.dumped]),
                       "overflows": described}, f, indent=1)
        self.steps.append((model_id, record.step, described))
        first = described[0]
        more = f", {len(found) - 1} more after it" if len(found) > 1 else ""
        tf_logging.warning(
            "npu_bridge overflow detection: step %d of %s: first overflow in %s (%s, %s)%s; records in %s; "
            "created at %s", record.step, model_name, first["user_op"] if first["user_op"].startswith("the ")
            else "op " + first["user_op"], first["op_type"], first["dtype"], more, folder,
            first["source"] or "an unknown line")


def write_opdebug(folder, model_id, task_id):
    """The Opdebug record of a step whose first overflowing op is `task_id` (see the module docstring)."""
    timestamp = layout.timestamp_us()
    message = dumpdata.DumpData(version=DUMP_VERSION, dump_time=timestamp, op_name="Node_OpDebug")
    dumpdata.fill(message.output.add(), np.frombuffer(opdebug.encode(model_id, task_id), np.uint8))
    return dumpdata.write(os.path.join(folder, f"Opdebug.Node_OpDebug.{task_id}.{timestamp}"), message)
