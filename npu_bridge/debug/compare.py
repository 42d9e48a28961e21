"""One-process comparison of an emulated NPU step against float32 ground truth, op by op.

At a chosen step the observer (a run observer, runtime/observers.py) reads the inner session's variables before
the step runs and fetches, in the step's own execution, the emulated value of every float tensor and every
source output (stepgraph.py). After the step it computes the ground truth in a plain float32 session of the
user's own GraphDef: the variable values from before the step are written into it and the step's feeds and
source outputs are fed, so it computes from the same inputs; it only reads, and being written again before each
compared step it never applies an update twice to anything the user sees.

Two errors per tensor:
- accumulated: the emulated value against the ground truth (msaccucmp's metrics, metrics.py): everything the
  reduced dtype did upstream of the op;
- local: for each op the pass reduced, the emulated graph's own computation of that op fed the float32 ground
  truth of its inputs (rounded where the NPU rounds them, by the same feed path a user's feed takes) against
  the float32 output: the error the op adds itself. Ops are fed and fetched in a few batches, each batch
  holding ops none of which reads another's output, so one run measures many ops.
  An op that routes values by comparing its inputs (MaxPoolGrad sends each gradient to its window's maximum) is
  judged against float32 fed the same rounded inputs: rounding makes ties in a window, and the gradient then goes
  to another maximum, a valid choice that float32 would make on those inputs too, not an error of the op.
The first op (execution order) whose local error passes metrics.LOCAL_THRESHOLDS for its dtype, or which
overflows from finite inputs, is the one to look at: the summary names it and the user's line that created it.
Ops whose value the step does not use (stepgraph.used_ops: the gradient with respect to a constant) are compared
but not judged.
"""
import csv
import math
import os

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import errors

from npu_bridge import tf_private
from npu_bridge.debug import dumpdata, lossscale, metrics, vis
from npu_bridge.debug.overflow import abnormal, overflowed
from npu_bridge.debug.stepgraph import StepGraph, is_float, source_line, variable_of
from npu_bridge.runtime import observers, steps

# msaccucmp's columns in its order (vector_cmp/fusion_manager/compare_result.py, without -overflow_detection),
# then npu_bridge's own: OverFlow (always computed here) and the local error of each reduced op.
COLUMNS = ("Index", "OpType", "NPUDump", "DataType", "Address", "GroundTruth", "DataType", "Address",
           "TensorIndex", "Shape", *metrics.ALGORITHMS, "CompareFailReason",
           "OverFlow", "LocalRelativeError", "LocalMaxAbsoluteError", "LocalOverFlow", "LocalThreshold", "SourceLine")
COSINE_ALERT = 0.99     # msaccucmp's advisor: the first row below it is where "Global Consistency" is lost
# Ops that choose where each value goes by comparing float inputs (the max of a pooling window).
ROUTING_OPS = frozenset({"MaxPoolGrad", "MaxPoolGradV2", "MaxPool3DGrad", "MaxPoolGradGrad", "MaxPoolGradGradV2",
                         "MaxPool3DGradGrad", "FractionalMaxPoolGrad"})


def _dt(dtype_name):
    return "DT_" + {"float32": "FLOAT", "float16": "FLOAT16", "bfloat16": "BF16", "float64": "DOUBLE"}.get(
        dtype_name, dtype_name.upper())


def shape_text(shape):
    """A shape as msaccucmp's CSV writes it: `[2,3]`."""
    return "[" + ",".join(str(d) for d in shape) + "]"


class Reference:
    """A plain float32 session of the user's GraphDef, for one version of the user's graph."""

    def __init__(self, graph_def, config):
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        self.session = tf.compat.v1.Session(graph=self.graph, config=config)
        self.variables = steps.VariableCopier(self.graph)

    def run(self, names, variables, feeds):
        self.variables.write(self.session, variables)
        return self.session.run(list(names), feeds)

    def on_rounded_inputs(self, op, truth, dtype):
        """`op`'s float32 outputs computed from its float inputs' ground truth rounded to `dtype` (the variables
        are those the last run wrote)."""
        feeds = {}
        with np.errstate(over="ignore", invalid="ignore"):
            for tensor in op.inputs:
                if is_float(tensor) and tensor.name in truth:
                    feeds[tensor.name] = np.asarray(truth[tensor.name]).astype(dtype).astype(
                        tensor.dtype.base_dtype.as_numpy_dtype)
        return self.session.run([t.name for t in op.outputs], feeds)

    def close(self):
        self.session.close()


class LocalRunner:
    """Measures reduced ops fed ground truth: Plans of the emulated program, batched so no fed tensor is fetched."""

    def __init__(self, emulation, step_graph):
        self.emulation, self.step_graph = emulation, step_graph
        batches = []
        for op in step_graph.local_ops:
            inputs = {t.name for t in op.inputs if is_float(t)}
            outputs = {t.name for t in op.outputs if t.name in step_graph.inner}
            for batch in batches:
                if not outputs & batch["feeds"] and not inputs & batch["fetches"]:
                    break
            else:
                batch = {"ops": [], "feeds": set(), "fetches": set()}
                batches.append(batch)
            batch["ops"].append(op)
            batch["feeds"] |= inputs
            batch["fetches"] |= outputs
        self.batches = [batch["ops"] for batch in batches]
        self._plans = {}

    def measure(self, truth):
        """{op name: (list of output values, or None) and failure reason}, for every local op."""
        results = {}
        for ops in self.batches:
            try:
                results.update(self._run(ops, truth))
            except (errors.OpError, ValueError, TypeError):
                for op in ops:
                    try:
                        results.update(self._run([op], truth))
                    except (errors.OpError, ValueError, TypeError) as error:
                        message = getattr(error, "message", None) or str(error)
                        results[op.name] = (None, f"local error not measured: {message.splitlines()[0]}")
        return results

    def _run(self, ops, truth):
        key = tuple(op.name for op in ops)
        plan = self._plans.get(key)
        graph = self.emulation.graph
        if plan is None:
            fetched = {t.name for op in ops for t in op.outputs if t.name in self.step_graph.inner}
            fetches = [t for op in ops for t in op.outputs if t.name in fetched]
            feeds = {t.name: t for op in ops for t in op.inputs if is_float(t)}
            for tensor in self.step_graph.feeds:
                feeds.setdefault(tensor.name, tensor)
            for name in self.step_graph.sources:
                feeds.setdefault(name, graph.get_tensor_by_name(name))
            plan = self.emulation.plan_for(fetches, [t for n, t in feeds.items() if n not in fetched])
            self._plans[key] = plan
        with np.errstate(over="ignore", invalid="ignore"):     # rounding a value beyond float16 is the point here
            values = plan.execute([truth[slot.user_tensor.name] for slot in plan.slots])
        by_name = dict(zip((t.name for t in plan.mapper.unique_fetches()), values))
        return {op.name: ([by_name.get(t.name) for t in op.outputs], "") for op in ops}


class StepComparison:
    """The comparison of one step: rows (one dict per compared tensor, CSV columns as keys) and the verdict.

    skipped: the loss-scaling message when NPULossScaleOptimizer skipped this step ("step 3 skipped by loss
    scaling, scale 2^32 -> 2^31"; lossscale.py), else "". Under dynamic loss scaling a skipped step's overflows
    are the ones loss scaling expects (the scale shrinks until they stop), so it names no op breaking accuracy;
    under a fixed scale every such step is lost, and the op is named.
    """

    def __init__(self, step, fetches, rows, trains=False, signature=None, skipped="", expected=False):
        self.step = step
        self.fetches = fetches          # user names of the step's fetches, to tell plans apart
        self.rows = rows
        self.trains = trains            # the step ran an optimizer's update
        self.signature = signature      # the plan's fetch-and-feed signature
        self.skipped = skipped
        self.expected = expected        # a step dynamic loss scaling skipped: not judged

    @property
    def culprit(self):
        """The first row (execution order) whose op breaks accuracy itself: its local error passes the threshold,
        it overflows when fed float32 inputs, or it overflows in the emulated step while none of its inputs does
        (as the NPU's overflow detection flags it: an epsilon lost upstream makes a 0/0 here)."""
        if self.expected:
            return None
        for row in self._judged():
            if row["LocalOverFlow"] == "YES" or row["overflow_origin"] or \
                    _number(row["LocalRelativeError"]) > _number(row["LocalThreshold"]):
                return row
        return None

    def _judged(self):
        return (row for row in self.rows if not row.get("unused"))

    def first_overflow(self):
        return next((row for row in self._judged() if row["OverFlow"] == "YES"), None)

    def first_divergence(self):
        return next((row for row in self._judged() if _number(row["CosineSimilarity"], 1.0) < COSINE_ALERT), None)

    def summary(self):
        local = sum(1 for row in self.rows if row["LocalRelativeError"] != "")
        unused = sum(1 for row in self.rows if row.get("unused"))
        lines = [f"step {self.step} (fetches {', '.join(self.fetches) or '-'}): {len(self.rows)} float tensors "
                 f"compared with float32, {local} outputs of reduced ops measured alone"
                 + (f"; {unused} that the step does not use (gradients with respect to constants) not judged"
                    if unused else "")]
        culprit = self.culprit
        if self.expected:
            lines.append(f"{self.skipped}: its overflows are the ones dynamic loss scaling expects, not judged")
        elif self.skipped:
            lines.append(f"{self.skipped} (a fixed scale: every step overflowing at it is lost)")
        if culprit is not None:
            if culprit["LocalOverFlow"] == "YES":
                why = "overflows from finite float32 inputs (Inf/NaN, or float16 |x| >= 65504)"
            elif culprit["overflow_origin"]:
                why = ("overflows in the emulated step (Inf/NaN, or float16 |x| >= 65504) though none of its inputs "
                       "does, and alone on float32 inputs it does not: look at what its inputs lost upstream")
            else:
                why = (f"adds a local relative error of {_number(culprit['LocalRelativeError']):.3g} (threshold "
                       f"{_number(culprit['LocalThreshold']):.3g} for {culprit['DataType_npu']})")
            lines.append(f"first op breaking accuracy: {culprit['NPUDump']} ({culprit['OpType']}, "
                         f"{culprit['DataType_npu']}) {why}")
            lines.append(f"    created at {culprit['SourceLine'] or '(no user frame in its traceback)'}")
        elif not self.expected:
            lines.append("no reduced op breaks the local-error threshold or overflows on its own")
        overflow = self.first_overflow()
        if overflow is not None:
            lines.append(f"first tensor holding an overflow: {overflow['TensorIndex']} ({overflow['OpType']})")
        divergence = self.first_divergence()
        if divergence is not None:
            lines.append(f"first tensor with cosine similarity < {COSINE_ALERT}: {divergence['TensorIndex']} "
                         f"({_number(divergence['CosineSimilarity']):.6f})")
        return "\n".join(lines)

    def write_csv(self, path):
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            for row in self.rows:
                writer.writerow([_cell(dumpdata.numpy_name(row[key]) if key in _DTYPE_KEYS else row[key])
                                 for key in _ROW_KEYS])
        return path

    def plot(self, path):
        """Error by execution order (matplotlib, when installed); returns the path, or None without matplotlib."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return None
        index = [row["Index"] for row in self.rows]
        accumulated = [_number(row["RelativeEuclideanDistance"]) for row in self.rows]
        local = [_number(row["LocalRelativeError"]) for row in self.rows]
        figure, axes = plt.subplots(figsize=(10, 4))
        axes.semilogy(index, np.maximum(np.nan_to_num(accumulated, nan=np.inf), 1e-12), ".-", label="accumulated "
                      "(relative Euclidean distance)")
        axes.semilogy(index, np.maximum(np.nan_to_num(local, nan=np.inf), 1e-12), "x", label="local (op alone)")
        culprit = self.culprit
        if culprit is not None:
            axes.axvline(culprit["Index"], color="red", linestyle=":", label=f"first culprit {culprit['NPUDump']}")
        axes.set_xlabel("tensor, in execution order")
        axes.set_ylabel("error against float32")
        axes.set_title(f"step {self.step}")
        axes.legend(loc="best", fontsize="small")
        figure.tight_layout()
        figure.savefig(path)
        plt.close(figure)
        return path


_ROW_KEYS = ("Index", "OpType", "NPUDump", "DataType_npu", "Address", "GroundTruth", "DataType_truth", "Address",
             "TensorIndex", "Shape", *metrics.ALGORITHMS, "CompareFailReason",
             "OverFlow", "LocalRelativeError", "LocalMaxAbsoluteError", "LocalOverFlow", "LocalThreshold", "SourceLine")


_DTYPE_KEYS = ("DataType_npu", "DataType_truth")     # rows hold the dump's names, the CSV msaccucmp's


def _number(value, default=-math.inf):
    if value == "" or value is None:
        return default
    return float(value)


def _cell(value):
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.6g}"
    return value


def skipped_by_loss_scaling(scaling, inner, record, variables):
    """(the loss-scaling message of a skipped step or "", whether dynamic scaling expects the skip); `inner`
    maps the LossScaling's user tensor names to the inner names fetched, `variables` are from before the step."""
    if scaling is None or inner.get(scaling.applied) not in record.extra:
        return "", False
    if bool(np.asarray(record.extra[inner[scaling.applied]])):
        return "", False
    return lossscale.skipped_message(record.step, *lossscale.scales(scaling, inner, record, variables)), \
        scaling.dynamic


def compare_step(emulation, plan, step, step_graph, variables, record, reference, local_runner,
                 skipped=("", False)):
    """The StepComparison of one executed step (see the module docstring)."""
    truth_feeds = {}
    for slot in plan.slots:
        if not slot.targets:
            continue
        name = slot.user_tensor.name
        value = record.feeds.get(name)
        if value is None:
            value = np.asarray(record.feeds[slot.targets[0][0]]).astype(slot.dtype)
        truth_feeds[name] = value
    for name in step_graph.sources:
        truth_feeds[name] = record.extra[name]
    # A variable read's ground truth is the variable before the step, not a fetch: a read fetched in a run that
    # also applies the update may show the value after it.
    reads = {t.name: variable_of(t) for t in step_graph.variable_reads if variable_of(t) in variables}
    names = [t.name for t in (*step_graph.compared, *step_graph.variable_reads, *step_graph.constants)
             if t.name not in reads]
    golden = dict(zip(names, reference.run(names, variables, truth_feeds)))
    golden.update((read, np.asarray(variables[name])) for read, name in reads.items())
    truth = {**golden, **truth_feeds}
    local = local_runner.measure(truth) if local_runner.batches else {}
    routed = {}                 # op name -> float32 outputs on rounded inputs, for ROUTING_OPS
    rows = []
    for index, tensor in enumerate(step_graph.compared):
        op = tensor.op
        emulated = record.extra[step_graph.inner[tensor.name]]
        npu_dtype = step_graph.dtypes[tensor.name]
        row = {"Index": index, "OpType": op.type, "NPUDump": op.name, "DataType_npu": _dt(npu_dtype),
               "Address": "NaN", "GroundTruth": op.name, "DataType_truth": _dt(tensor.dtype.base_dtype.name),
               "TensorIndex": f"{op.name}:output:{tensor.value_index}", "Shape": shape_text(np.shape(emulated)),
               "OverFlow": "YES" if abnormal(emulated) else "NO", "overflow_origin": False, "LocalRelativeError": "",
               "LocalMaxAbsoluteError": "", "LocalOverFlow": "", "LocalThreshold": "",
               "SourceLine": source_line(op), "tensor": tensor.name, "inputs": [t.name for t in op.inputs],
               "unused": op.name in step_graph.unused,
               "stats_npu": metrics.statistics(emulated), "stats_truth": metrics.statistics(golden[tensor.name])}
        with np.errstate(over="ignore", invalid="ignore"):
            scores = metrics.compare_arrays(emulated, golden[tensor.name])
        row["CompareFailReason"] = scores.pop("reason")
        row.update(scores)
        emulated_inputs = [record.extra[step_graph.inner[t.name]] for t in op.inputs if t.name in step_graph.inner]
        if row["OverFlow"] == "YES":
            row["overflow_origin"] = overflowed(emulated_inputs, [emulated])
        if op.name in local:
            values, reason = local[op.name]
            decision = step_graph.decisions[op.name]
            row["LocalThreshold"] = metrics.LOCAL_THRESHOLDS[decision]
            if values is None:
                row["CompareFailReason"] = "; ".join(filter(None, (row["CompareFailReason"], reason)))
            else:
                reduced = tf.as_dtype(decision).as_numpy_dtype
                mine = np.asarray(values[tensor.value_index]).astype(reduced)
                inputs = [truth[t.name] for t in op.inputs if t.name in truth]
                expected = golden[tensor.name]
                if op.type in ROUTING_OPS:
                    expected = routed.setdefault(op.name, reference.on_rounded_inputs(op, truth, reduced))[
                        tensor.value_index]
                if mine.shape != np.shape(expected):
                    # Placeholder outputs whose shape depends on the kernel's dtype (FusedBatchNormGradV3's
                    # reserve_space_4/5: () in float32, (0,) in float16) hold no values to judge.
                    row["CompareFailReason"] = "; ".join(filter(None, (
                        row["CompareFailReason"], f"local error not judged: the {decision} kernel's output has "
                                                  f"shape {mine.shape}, float32's {np.shape(expected)}")))
                else:
                    row["LocalRelativeError"] = metrics.local_error(mine, expected)
                    difference = metrics.as_float64(mine) - metrics.as_float64(expected)
                    row["LocalMaxAbsoluteError"] = float(np.max(np.abs(difference))) if difference.size else 0.0
                    # An op reading a value the emulated step already saturated (65504s from a float16 producer)
                    # inherits the overflow, as the NPU's overflow detection sees it: fed that value's float32 truth,
                    # which float16 cannot hold, it overflows again without being the cause.
                    row["LocalOverFlow"] = "YES" if overflowed(inputs, [mine]) and not any(
                        abnormal(value) for value in emulated_inputs) else "NO"
        rows.append(row)
    fetches = [f.name for f in plan.mapper.unique_fetches()]
    return StepComparison(step, fetches, rows, step_graph.trains, plan.signature, *skipped)


class CompareObserver(observers.RunObserver):
    """Compares chosen steps of every plan that runs reduced ops; keeps each StepComparison in `comparisons`.

    steps: a container of step numbers, None for "the next step of any such plan, once" (the Python API), or a
    callable `(step_graph, plan, step) -> bool` (the CLI's scan of each graph's first steps).
    on_compared(comparison): called after each comparison (the CLI writes files and may stop the script there).
    on_skipped(comparison): with it, a step loss scaling skipped is not compared; it gets a StepComparison
    without rows instead (the scan does not spend a float32 run on a step it does not judge).
    """

    def __init__(self, steps=None, on_compared=None, on_skipped=None):
        self.steps = steps
        self.on_compared = on_compared
        self.on_skipped = on_skipped
        self.comparisons = []
        self._graphs = {}
        self._scaling = {}          # plan key -> (LossScaling or None, {user name: inner name})
        self._references = {}
        self._local = {}
        self._copiers = {}          # id(program) -> VariableCopier of its inner graph
        self._pending = None
        self._once_done = False
        self.steps_seen = {}        # plan signature -> steps seen, to explain a step that was never reached

    def before_step(self, emulation, plan, step):
        self.steps_seen[plan.signature] = step + 1
        chooser = self.steps if callable(self.steps) else None
        if self.steps is None and self._once_done or \
                chooser is None and self.steps is not None and step not in self.steps:
            return ()
        key = (id(plan.program), plan.program.version, plan.signature)
        step_graph = self._graphs.get(key)
        if step_graph is None:
            step_graph = self._graphs[key] = StepGraph(emulation, plan)
        if not step_graph.runs_reduced or chooser is not None and not chooser(step_graph, plan, step):
            return ()
        scaling = self._scaling.get(key)
        if scaling is None:
            found = lossscale.find(step_graph.ops)
            names = found.tensors() if found is not None else ()
            inner = {name: step_graph.inner_name(name) for name in names}
            scaling = self._scaling[key] = (found, {k: v for k, v in inner.items() if v is not None})
        copier = self._copiers.get(id(plan.program))
        if copier is None or copier.graph is not plan.program.graph:
            copier = self._copiers[id(plan.program)] = steps.VariableCopier(plan.program.graph)
        variables = copier.read(plan.program.session)
        self._pending = (emulation, plan, step, step_graph, key, variables)
        return (*step_graph.extra_fetches(), *scaling[1].values())

    def after_step(self, record):
        if self._pending is None or self._pending[1] is not record.plan:
            return
        emulation, plan, step, step_graph, key, variables = self._pending
        self._pending = None
        self._once_done = True
        skipped = skipped_by_loss_scaling(*self._scaling[key], record, variables)
        if skipped[1] and self.on_skipped is not None:
            fetches = [f.name for f in plan.mapper.unique_fetches()]
            self.on_skipped(StepComparison(step, fetches, [], step_graph.trains, plan.signature, *skipped))
            return
        reference_key = (id(emulation), emulation.program.version)
        reference = self._references.get(reference_key)
        if reference is None:
            with tf_private.session_run_lock(emulation.graph):
                graph_def = emulation.graph.as_graph_def()
            reference = self._references[reference_key] = Reference(graph_def, emulation.config)
        local_runner = self._local.get(key)
        if local_runner is None:
            local_runner = self._local[key] = LocalRunner(emulation, step_graph)
        copier, session = self._copiers[id(plan.program)], plan.program.session
        # The local runs execute in the emulated session, whose variables now hold the step's update; an op
        # reading a variable directly must see the value the step read, so the values from before the step are
        # put back for the local runs and the updated ones restored after.
        updated = copier.read(session) if local_runner.batches and variables else None
        if updated is not None:
            copier.write(session, variables)
        try:
            comparison = compare_step(emulation, plan, step, step_graph, variables, record, reference,
                                      local_runner, skipped)
        finally:
            if updated is not None:
                copier.write(session, updated)
        self.comparisons.append(comparison)
        if self.on_compared is not None:
            self.on_compared(comparison)

    def close(self):
        for reference in self._references.values():
            reference.close()
        self._references.clear()


def write_outputs(comparison, out_dir, graph_name, plot=True):
    """The CSV, the `.vis` graph for tb-graph-ascend (vis.py) and the plot of one comparison in `out_dir`, named
    `{graph_name}_step{N}`; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    stem = f"{graph_name}_step{comparison.step}"
    paths = [comparison.write_csv(os.path.join(out_dir, stem + ".csv")),
             vis.write(comparison, os.path.join(out_dir, stem + ".vis"))]
    if plot:
        figure = comparison.plot(os.path.join(out_dir, stem + ".png"))
        if figure is not None:
            paths.append(figure)
    return paths
