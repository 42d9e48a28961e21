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


def variable_of(tensor):
    """The name of the variable op `tensor` is (handle or value), possibly through Identity ops, or None."""
    source = tensor
    while source.op.type in ("Identity", "ReadVariableOp") and source.op.inputs:
        source = source.op.inputs[0]
    return source.op.name if source.op.type in VARIABLE_OPS else None


def _reads_variable(tensor):
    return variable_of(tensor) is not None


def is_source(op):
    """A stateful op without float inputs whose outputs the reference takes from the emulated step."""
    if not _stateful(op) or op.type in VARIABLE_OPS or not op.outputs or tf_private.control_flow_context(op) is not None:
        return False
    if any(tf_private.is_ref_dtype(t.dtype) or is_float(t) or (t.dtype == tf.resource and _reads_variable(t))
           for t in op.inputs):
        return False
    return all(_plain(t) for t in op.outputs)


def _stateful(op):
    try:
        return op.op_def.is_stateful
    except (AttributeError, ValueError):
        return False


def used_ops(executed, fetched, fed):
    """Names of the ops in `executed` whose value the step uses: an output reaches a fetched tensor (names in
    `fetched`) or an op that writes state (stateful, or reading a ref: an optimizer's update, an assignment)
    along data edges.

    The others run only because a control edge asks for them. tf.gradients gates each op's input gradients
    together (GATE_OP), so the gradient with respect to a constant (a Mul's constant factor, a division's
    constant divisor, the frozen kernel of a feature extractor) is computed every step and read by nothing:
    its float16 error or overflow cannot change the run.
    """
    by_name = {op.name: op for op in executed}
    writes = [op for op in executed if _stateful(op) or any(tf_private.is_ref_dtype(t.dtype) for t in op.inputs)]
    stack = [name.rsplit(":", 1)[0] for name in fetched]
    stack += [t.op.name for op in writes for t in op.inputs if t.name not in fed]
    used = set()
    while stack:
        name = stack.pop()
        if name in used or name not in by_name:
            continue
        used.add(name)
        stack.extend(t.op.name for t in by_name[name].inputs if t.name not in fed)
    return used


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
    pass reduced, whose float inputs all have a known ground truth and whose value the step uses; constants: the
    float Const outputs they read; unused: names of executed ops whose value nothing uses (used_ops), not judged.
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
        fetched = [f.name for f in plan.mapper.unique_fetches() if isinstance(f, tf.Tensor)]
        used = used_ops(executed, fetched, fed)
        self.unused = {op.name for op in executed if op.name not in used}
        # The graph that trains: it runs an optimizer's update (inside a cond under loss scaling).
        self.trains = any(op.type.startswith(_UPDATE_PREFIXES) for op in executed)
        self.ops = [op for op in executed if tf_private.control_flow_context(op) is None]
        self.sources = [t.name for op in self.ops if is_source(op) for t in op.outputs if t.name not in fed]
        source_ops = {name.rsplit(":", 1)[0] for name in self.sources}
        self.inner, self.compared, self.dtypes = {}, [], {}
        # A fetched variable read may hold the value after the step's update (TensorFlow hands out the variable's
        # buffer, which the update then writes): such reads are not compared; their ground truth is the value of
        # the variable before the step.
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
        # A constant's value is its own ground truth (a division by a constant `size`: the divisor may leave
        # float16's range, the error is then the division's own).
        constants = {t.name: t for op in self.ops if op.type == "Const" for t in op.outputs if is_float(t)}
        known = set(self.inner) | fed | set(self.sources) | {t.name for t in self.variable_reads} | set(constants)
        self.local_ops, self.decisions = [], {}
        for op in self.ops:
            try:
                record = report.by_name(op.name)
            except KeyError:
                continue
            if record.decision != report.reduced_dtype or op.name in self.unused or \
                    not any(t.name in self.inner for t in op.outputs):
                continue
            if all(t.name in known for t in op.inputs if is_float(t)):
                self.local_ops.append(op)
                self.decisions[op.name] = record.decision
        read = {t.name for op in self.local_ops for t in op.inputs}
        self.constants = [tensor for name, tensor in constants.items() if name in read]
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
