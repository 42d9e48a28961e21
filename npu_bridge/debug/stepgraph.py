"""What one step of a plan executes, seen in the user's graph: the ops, the tensors worth comparing, the inputs.

A step's values depend on three things besides the graph: the fed values, the variables, and the outputs of
stateful ops without float inputs (input pipelines, random ops, table lookups). A float32 reference given the
first two recomputes everything except the third, which it cannot reproduce (an iterator would start over, a
random op would draw again); those "source" outputs are fetched from the emulated step and fed to the reference,
so both compute from the same inputs.
"""
import functools
import linecache
import os

import tensorflow as tf

from npu_bridge import tf_private
from npu_bridge.core.contract import VARIABLE_OPS

FLOAT_DTYPES = frozenset({tf.float16, tf.bfloat16, tf.float32, tf.float64})
# Op types of an optimizer's variable update (ApplyGradientDescent, ResourceApplyAdam, SparseApplyMomentum, ...).
_UPDATE_PREFIXES = ("Apply", "ResourceApply", "SparseApply", "ResourceSparseApply")
_INPUT_OPS = frozenset({"Const", "Placeholder", "PlaceholderV2", "PlaceholderWithDefault"})
# Frames in these folders are not the user's code: TensorFlow's site-packages folder and npu_bridge itself.
_LIBRARY_DIRS = (os.path.realpath(os.path.dirname(os.path.dirname(tf.__file__))) + os.sep,
                 os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep)


def is_float(tensor):
    dtype = tensor.dtype
    return not tf_private.is_ref_dtype(dtype) and dtype.base_dtype in FLOAT_DTYPES


def _plain(tensor):
    """A value a session can fetch and feed: not a ref, resource or variant."""
    return not tf_private.is_ref_dtype(tensor.dtype) and tensor.dtype not in (tf.resource, tf.variant)


def _reads_variable(tensor):
    """Is `tensor` a variable (handle or value), possibly through Identity ops?"""
    source = tensor
    while source.op.type in ("Identity", "ReadVariableOp") and source.op.inputs:
        source = source.op.inputs[0]
    return source.op.type in VARIABLE_OPS


def is_source(op):
    """A stateful op without float inputs whose outputs the reference takes from the emulated step."""
    try:
        stateful = op.op_def.is_stateful
    except (AttributeError, ValueError):
        return False
    if not stateful or op.type in VARIABLE_OPS or not op.outputs or tf_private.control_flow_context(op) is not None:
        return False
    if any(tf_private.is_ref_dtype(t.dtype) or is_float(t) or (t.dtype == tf.resource and _reads_variable(t))
           for t in op.inputs):
        return False
    return all(_plain(t) for t in op.outputs)


def executed_ops(roots, fed):
    """The user ops a run of `roots` (ops) executes, in creation order; fed tensor names cut the walk."""
    seen, stack = {}, list(roots)
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen[op.name] = op
        stack.extend(t.op for t in op.inputs if t.name not in fed)
        stack.extend(op.control_inputs)
    return sorted(seen.values(), key=tf_private.op_id)


class StepGraph:
    """One plan's step in the user's graph: compared tensors, sources, and the reduced ops to measure locally.

    compared: user float tensors computed in the step, in execution order, with the inner tensor holding each
    one's emulated value (`inner[name]`); sources: user tensor names of source outputs; local_ops: user ops the
    pass reduced, whose float inputs all have a known ground truth.
    """

    def __init__(self, emulation, plan):
        program = plan.program
        tensor_map, report = program.result.tensor_map, program.result.report
        self.reduced_dtype = report.reduced_dtype
        self.feeds = [slot.user_tensor for slot in plan.slots if slot.targets]
        fed = {t.name for t in self.feeds}
        inner_fed = set(plan.feed_names)
        roots = [f if isinstance(f, tf.Operation) else f.op for f in plan.mapper.unique_fetches()]
        executed = executed_ops(roots, fed)
        # The graph that trains: it runs an optimizer's update (inside a cond under loss scaling).
        self.trains = any(op.type.startswith(_UPDATE_PREFIXES) for op in executed)
        self.ops = [op for op in executed if tf_private.control_flow_context(op) is None]
        self.sources = [t.name for op in self.ops if is_source(op) for t in op.outputs if t.name not in fed]
        source_ops = {name.rsplit(":", 1)[0] for name in self.sources}
        self.inner, self.compared, self.dtypes = {}, [], {}
        # A fetched variable read may hold the value after the step's update (TensorFlow hands out the variable's
        # buffer): such reads are not compared, only read from the reference (they equal the variables written).
        self.variable_reads = []
        for op in self.ops:
            if op.type in _INPUT_OPS or op.name in source_ops:
                continue
            for tensor in op.outputs:
                if not is_float(tensor) or tensor.name in fed:
                    continue
                if _reads_variable(tensor):
                    self.variable_reads.append(tensor)
                    continue
                ref = tensor_map.get(tensor.name)
                inner = ref.name if ref is not None else tensor.name
                if inner in inner_fed or not _exists(program.graph, inner):
                    continue
                self.inner[tensor.name] = inner
                self.compared.append(tensor)
                self.dtypes[tensor.name] = ref.dtype if ref is not None else tensor.dtype.base_dtype.name
        known = set(self.inner) | fed | set(self.sources) | {t.name for t in self.variable_reads}
        self.local_ops, self.decisions = [], {}
        for op in self.ops:
            try:
                record = report.by_name(op.name)
            except KeyError:
                continue
            if record.decision != report.reduced_dtype or not any(t.name in self.inner for t in op.outputs):
                continue
            if all(t.name in known for t in op.inputs if is_float(t)):
                self.local_ops.append(op)
                self.decisions[op.name] = record.decision
        self.reduced_ops = sum(1 for op in self.ops if _decision(report, op.name) == report.reduced_dtype)
        self.runs_reduced = self.reduced_ops > 0
        self._program_graph = program.graph
        self._tensor_map = tensor_map

    def inner_name(self, user_name):
        """The inner tensor holding user tensor `user_name` in this step, or None when the program has none."""
        ref = self._tensor_map.get(user_name)
        inner = ref.name if ref is not None else user_name
        return inner if _exists(self._program_graph, inner) else None

    def extra_fetches(self):
        """Inner tensor names the emulated step must fetch too: every compared value and every source output."""
        return tuple(dict.fromkeys([*self.inner.values(), *self.sources]))


def _decision(report, name):
    try:
        return report.by_name(name).decision
    except KeyError:
        return None


def _exists(graph, name):
    try:
        graph.get_tensor_by_name(name)
    except (KeyError, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=4096)
def _is_library(filename):
    return os.path.realpath(filename).startswith(_LIBRARY_DIRS) or "site-packages" in filename


def source_line(op):
    """"file:line: code" of the innermost frame of the user's code that created `op` ("" when unknown)."""
    for frame in reversed(op.traceback or ()):
        filename = frame.filename if hasattr(frame, "filename") else frame[0]
        if _is_library(filename):
            continue
        lineno = frame.lineno if hasattr(frame, "lineno") else frame[1]
        line = (frame.line if hasattr(frame, "line") else frame[3]) or linecache.getline(filename, lineno)
        return f"{filename}:{lineno}: {line.strip()}"
    return ""
