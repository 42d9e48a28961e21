"""Find a small set of ops to keep in float32 so a metric tensor stays within a tolerance of float32.

The script's first N steps are recorded once (capture.py); every candidate is then judged by replaying those
steps in this process: the recorded GraphDef in a new emulated session whose customize_dtypes keeps the
candidate ops in float32 (through the process's parameter overrides, npu_bridge/settings.py), starting from the
recorded variables and fed the recorded inputs. Identical inputs by construction: no rerun of the script, no
dependence on its seeding.

1. Range pre-pass: a float32 replay; reduced ops reading or producing a value beyond the reduced dtype's range
   (float16: |x| > 65504) are kept in float32 from the start. Under loss scaling this replay runs at scale 1:
   a gradient only the loss scale makes large is loss scaling's business (it skips the step and shrinks the
   scale), not a reason to keep an op in float32. Nor is a value the step does not use (the gradient with
   respect to a constant divisor): such ops are left to the bisection, which keeps them only if they matter.
2. Bisection over the remaining reduced ops in execution order, as onnxconverter-common's auto mixed precision
   does: take the largest untested segment, try it reduced with every op not yet proven good kept in float32;
   a passing segment is good, a failing one is split in half, a failing single op is kept in float32.
3. Pruning: each op the bisection kept is tried reduced again, alone, with the others kept; ops whose failure
   only showed together with another culprit's go back to the reduced dtype (the answer is 1-minimal).
Where even every candidate kept in float32 stays outside the tolerance because the step runs reduced ops the NPU
has no float32 kernel for (Conv2DBackpropInputD, MaxPool on the Ascend 910), no file can close that gap, on the
NPU as here: those ops are named, and unless --strict the tolerance is widened step by step by that replay's gap.
Every segment is tried once; the segments form a binary tree over the n candidates, so the bisection replays
at most 2n - 1 times; with the float32 and as-configured replays, the one with all candidates in float32, the
final check and at most one per op found, the bound is 3n + 3 (--max-replays caps it: untested segments then
stay in float32).
"""
import contextlib
import json
import logging
import os
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf

from npu_bridge.core.contract import ITERATIONS_PER_LOOP_ATTR
from npu_bridge.debug.progress import ops
from npu_bridge.debug.stepgraph import is_float
from npu_bridge.runtime import steps
from npu_bridge.settings import OVERRIDES_ENV

RANGE_LIMITS = {"float16": float(np.finfo(np.float16).max), "bfloat16": 3.3895313892515355e38}


def merged_overrides(overrides):
    """`overrides` over those the user set in $NPU_BRIDGE_PARAMETER_OVERRIDES (e.g. unsetting a script's
    customize_dtypes path that only exists on ModelArts): the user's stay unless the tool sets the same key."""
    try:
        users = json.loads(os.environ.get(OVERRIDES_ENV) or "{}")
    except ValueError:
        users = {}              # the session's own parsing names the bad value
    return {**(users if isinstance(users, dict) else {}), **overrides}


@contextlib.contextmanager
def parameter_overrides(overrides):
    """Set the process's NpuOptimizer parameter overrides (npu_bridge/settings.py) inside the block, over the
    user's own."""
    previous = os.environ.get(OVERRIDES_ENV)
    os.environ[OVERRIDES_ENV] = json.dumps(merged_overrides(overrides))
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(OVERRIDES_ENV, None)
        else:
            os.environ[OVERRIDES_ENV] = previous


@contextlib.contextmanager
def quiet_logs():
    """Replays build a new emulated session each: its summary line and warnings were the script's, once."""
    loggers = [logging.getLogger("npu_bridge"), logging.getLogger("tensorflow")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


class Replay:
    """Replays a Recording: its steps in a fresh session of its GraphDef, returning the metric per step."""

    def __init__(self, recording):
        self.recording = recording
        self.graph_def = tf.compat.v1.GraphDef()
        self.graph_def.CopyFrom(recording.graph_def)
        for node in self.graph_def.node:
            # One replayed run is one step: the loop a script set with set_iteration_per_loop is unrolled here.
            if ITERATIONS_PER_LOOP_ATTR in node.attr:
                del node.attr[ITERATIONS_PER_LOOP_ATTR]
        self.count = 0

    def run(self, overrides=None, watch=(), unscaled=False):
        """[metric per step], and {tensor name: max |x| over the steps} for the `watch` tensors.

        overrides: NpuOptimizer parameter overrides for the session; None runs plain float32 TensorFlow.
        unscaled: run with the loss scale at 1 (the range pre-pass).
        """
        self.count += 1
        recording = self.recording
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(self.graph_def, name="")
        if overrides is None:
            session = tf.compat.v1.Session(graph=graph, config=steps.float32_config(recording.config))
        else:
            with parameter_overrides(overrides):
                session = tf.compat.v1.Session(graph=graph, config=recording.config)
        metrics, peaks = [], dict.fromkeys(watch, 0.0)
        watch = list(watch)
        variables, scale_feed = recording.variables, {}
        scaling = recording.loss_scaling
        if unscaled and scaling is not None and scaling.dynamic:
            variables = {**variables, scaling.variable: np.ones((), np.float32)}
        elif unscaled and scaling is not None and scaling.scale:
            scale_feed = {scaling.scale: np.ones((), np.float32)}
        with session, quiet_logs():
            steps.write_variables(session, graph, variables)
            fetches = [name for name in recording.fetches if name != recording.metric]
            for feeds in recording.steps:
                values = session.run([recording.metric, watch, fetches], {**feeds, **scale_feed})
                metrics.append(np.asarray(values[0], np.float64))
                for name, value in zip(watch, values[1]):
                    array = np.abs(np.asarray(value, np.float64))
                    if array.size:
                        peaks[name] = max(peaks[name], float(np.nanmax(np.where(np.isfinite(array), array, np.inf))))
        return metrics, peaks


@dataclass
class Tolerance:
    rtol: float
    atol: float
    # Per step, |metric - float32| the NPU cannot close (ops without a float32 kernel), allowed on top; None: none.
    hardware_gap: list | None = None

    def holds(self, values, reference):
        """Every step's metric finite and within atol + rtol * |float32| (+ that step's hardware gap)."""
        gaps = self.hardware_gap or [0.0] * len(reference)
        return all(np.all(np.isfinite(v)) and np.all(np.abs(v - r) <= self.atol + self.rtol * np.abs(r) + gap)
                   for v, r, gap in zip(values, reference, gaps))

    def describe(self):
        gap = " + the NPU's own gap of that step" if self.hardware_gap else ""
        return f"the tolerance |value - float32| <= {self.atol:g} + {self.rtol:g} * |float32|{gap}"

    def within_reach(self, floor, reference):
        """This tolerance widened, step by step, by how far `floor` (every op that can be in float32 kept in
        float32) stays from float32: what no customize_dtypes can change is not held against a candidate."""
        gaps = [float(np.max(np.abs(np.asarray(f, np.float64) - np.asarray(r, np.float64))))
                for f, r in zip(floor, reference)]
        return Tolerance(self.rtol, self.atol, gaps)

    @staticmethod
    def worst(values, reference):
        """The largest |metric - float32| over the steps (inf when a metric is not finite)."""
        worst = 0.0
        for v, r in zip(values, reference):
            if not np.all(np.isfinite(v)):
                return float("inf")
            worst = max(worst, float(np.max(np.abs(v - r))))
        return worst


@dataclass
class Suggestion:
    blocked: list                   # op names to keep in float32, execution order
    range_blocked: list             # of which found by the range pre-pass
    types: list                     # their IR types
    moved: dict                     # IR type -> reduced ops a whole-type block also moves to float32
    replays: int
    bound: int
    untested: list = field(default_factory=list)     # left in float32 when --max-replays was reached
    float32: list = field(default_factory=list)      # metric per step, float32 replay
    mixed: list = field(default_factory=list)        # metric per step, replay as configured
    fixed: list = field(default_factory=list)        # metric per step, replay with the suggestion
    floor: list = field(default_factory=list)        # metric per step with every candidate in float32, when that
                                                     # is outside tolerance (the NPU's own gap): else empty
    hardware: list = field(default_factory=list)     # reduced ops of the step without a float32 kernel


def customize_lines(graph, names):
    """customize_dtypes lines keeping ops `names` in float32 (float ports float32, other ports unchanged)."""
    lines = []
    for name in names:
        op = graph.get_operation_by_name(name)
        inputs = ",".join("float32" if is_float(t) else "" for t in op.inputs)
        outputs = ",".join("float32" if is_float(t) else "" for t in op.outputs)
        lines.append(f"{name}::InputDtype:{inputs},OutputDtype:{outputs}")
    return lines


def mixlist_json(types):
    return json.dumps({"black-list": {"to-add": sorted(types)}}, indent=2) + "\n"


class Search:
    """The bisection, with its replays; files for candidates go to `work_dir`.

    progress(event): told of each replay (a ReplayEvent), for the CLI's progress line.
    within_reach: when even every candidate in float32 is outside the tolerance and the step runs reduced ops
    without a float32 kernel (`hardware`), judge against float32 widened by that replay's gap (what the NPU
    cannot close) instead of giving up; False: float32 alone (--strict).
    """

    def __init__(self, recording, tolerance, work_dir, max_replays, progress=None, within_reach=True):
        self.recording = recording
        self.tolerance = tolerance
        self.within_reach = within_reach
        self.work_dir = work_dir
        self.max_replays = max_replays
        self.progress = progress
        self.replay = Replay(recording)
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.graph_util.import_graph_def(self.replay.graph_def, name="")
        report = recording.report
        self.candidates, self.hardware = [], []
        for name in recording.op_names:
            try:
                record = report.by_name(name)
            except KeyError:
                continue
            if record.decision != recording.reduced_dtype:
                continue
            if recording.library.supports(record.ir_type, "float32"):
                self.candidates.append(name)
            elif name not in recording.unused:
                self.hardware.append(record)
        self.float32 = None
        self.bound = 0
        self.best = None            # (worst |metric - float32|, ops kept) of the best replay so far

    def _overrides_keeping(self, names):
        if not names:
            return {}
        path = os.path.join(self.work_dir, f"candidate_{self.replay.count}.cfg")
        with open(path, "w") as handle:
            handle.write("\n".join(customize_lines(self.graph, names)) + "\n")
        return {"customize_dtypes": path}

    def _told(self, what, kept, values):
        worst = Tolerance.worst(values, self.float32)
        ok = self.tolerance.holds(values, self.float32)
        if self.best is None or worst < self.best[0] or ok and len(kept) < len(self.best[1]):
            self.best = (worst, list(kept))
        if self.progress is not None:
            self.progress(ReplayEvent(self.replay.count, self.bound, what, len(kept), worst, ok, self.best))
        return ok

    def passes(self, kept):
        values, _ = self.replay.run(self._overrides_keeping(kept))
        return self._told(f"{ops(len(kept))} in float32", kept, values), values

    def run(self):
        limit = RANGE_LIMITS[self.recording.reduced_dtype]
        # An op's outputs, and inputs from producers that are not candidates (a candidate producer beyond range is
        # kept in float32 itself, and a gray reader follows it).
        candidates = set(self.candidates)
        ports = {name: [t.name for t in (*op.inputs, *op.outputs) if is_float(t) and
                        (t.op is op or t.op.name not in candidates)]
                 for name, op in ((n, self.graph.get_operation_by_name(n)) for n in self.candidates)}
        self.bound = 3 * len(self.candidates) + 3 if self.candidates else 2
        self.float32, peaks = self.replay.run(None, {t for names in ports.values() for t in names}, unscaled=True)
        if self.progress is not None:
            self.progress(ReplayEvent(self.replay.count, self.bound, "float32 (range pre-pass)", 0, 0.0, True, None))
        range_blocked = [name for name in self.candidates if name not in self.recording.unused and
                         any(peaks[t] > limit for t in ports[name])]
        mixed, _ = self.replay.run({})
        self._told("as configured", [], mixed)
        rest = [name for name in self.candidates if name not in range_blocked]
        bound = 3 * len(rest) + 3 if rest else 4  # float32, as configured, all kept, final, tree 2n - 1, pruning n
        self.bound = bound
        result = Suggestion(blocked=[], range_blocked=range_blocked, types=[], moved={}, replays=0, bound=bound,
                            float32=self.float32, mixed=mixed, fixed=mixed,
                            hardware=[record.name for record in self.hardware])
        if not range_blocked and self.tolerance.holds(mixed, self.float32):
            result.replays = self.replay.count
            return result
        all_ok, values = self.passes(self.candidates)
        if not all_ok:
            if not (self.within_reach and self.hardware and np.isfinite(Tolerance.worst(values, self.float32))):
                raise SuggestError(self._unreachable(values, mixed))
            self.tolerance = self.tolerance.within_reach(values, self.float32)
            result.floor = values
            if not range_blocked and self.tolerance.holds(mixed, self.float32):
                result.replays = self.replay.count
                return result
        good = set()
        segments = [rest] if rest else []
        while segments:
            segments.sort(key=len)
            segment = segments.pop()
            if self.replay.count >= self.max_replays:
                result.untested.extend(segment)
                continue
            ok, _ = self.passes(range_blocked + [name for name in rest if name not in good and name not in segment])
            if ok:
                good.update(segment)
            elif len(segment) > 1:
                half = len(segment) // 2
                segments.extend([segment[:half], segment[half:]])
        result.blocked = [name for name in self.candidates if name not in good]
        ok, result.fixed = self.passes(result.blocked)
        if not ok:
            raise SuggestError(f"the ops found ({', '.join(result.blocked)}) do not keep the metric within "
                               "tolerance when kept in float32 together (the reduced ops interact): widen the "
                               "tolerance, or keep more ops in float32" + self._blocking())
        for name in reversed([n for n in result.blocked if n not in range_blocked and n not in result.untested]):
            if self.replay.count >= self.max_replays:
                break
            fewer = [n for n in result.blocked if n != name]
            ok, values = self.passes(fewer)
            if ok:
                result.blocked, result.fixed = fewer, values
        report = self.recording.report
        result.types = sorted({report.by_name(name).ir_type for name in result.blocked})
        for record in report.records:
            if record.ir_type in result.types and record.decision == self.recording.reduced_dtype \
                    and record.name not in result.blocked:
                result.moved.setdefault(record.ir_type, []).append(record.name)
        result.replays = self.replay.count
        return result

    def _unreachable(self, values, mixed):
        """Why no set of ops can be kept in float32: the metric, the steps, the best reached and with which ops."""
        recording = self.recording
        steps = recording.step_numbers
        worst = Tolerance.worst(values, self.float32)
        best_worst, best_ops = self.best
        shown = ", ".join(best_ops[:6]) + (f" and {len(best_ops) - 6} more" if len(best_ops) > 6 else "")
        best = ("as configured, with no op in float32" if not best_ops
                else f"with {ops(len(best_ops))} in float32 ({shown})")
        return (f"metric {recording.metric} over steps {steps[0]}-{steps[-1]} cannot be brought within "
                f"{self.tolerance.describe()}: even with all {len(self.candidates)} reduced ops that have a float32 "
                f"kernel kept in float32 its worst difference from float32 is {worst:.4g} (as configured "
                f"{Tolerance.worst(mixed, self.float32):.4g}); the best reached is {best_worst:.4g}, {best}."
                + (self._blocking() or " The difference is not made by precision reduction alone (a "
                   "different training path), or the tolerance is too tight (--rtol, --atol)"))

    def _blocking(self):
        return f" Blocking it: {self.hardware_note()}" if self.hardware else ""

    def hardware_note(self, shown=3):
        """Which reduced ops of the step the NPU has no float32 kernel for, by type and count, with the user's
        lines of the first few: no file can keep them in float32, so their part of the gap is the hardware's."""
        if not self.hardware:
            return ""
        counts = {}
        for record in self.hardware:
            counts[record.ir_type] = counts.get(record.ir_type, 0) + 1
        types = ", ".join(f"{count} {ir_type}" for ir_type, count in counts.items())
        sources = self.recording.sources
        lines = "; ".join(f"{record.name} ({record.ir_type}) created at {sources.get(record.name) or 'an unknown line'}"
                          for record in self.hardware[:shown])
        more = f"; and {len(self.hardware) - shown} more" if len(self.hardware) > shown else ""
        return (f"{len(self.hardware)} reduced ops the NPU has no float32 kernel for ({types}) "
                f"stay {self.recording.reduced_dtype} whatever the files say, on the NPU as here: {lines}{more}. "
                "That gap is the hardware's" + (" (without --strict, suggest judges against float32 widened by "
                                                "it)" if not self.within_reach else ""))


@dataclass(frozen=True)
class ReplayEvent:
    """One replay of the search, for a progress display."""
    done: int                       # replays so far
    bound: int                      # the search's bound on replays
    what: str
    kept: int                       # ops in float32 in this replay
    worst: float                    # its worst |metric - float32|
    within: bool
    best: tuple | None              # (worst, ops kept) of the best replay so far


class SuggestError(RuntimeError):
    """No suggestion: the recording cannot be brought within tolerance by keeping ops in float32."""


def write_files(suggestion, graph, out_dir, mixlist_allowed=True):
    """(modify_mixlist path or None, customize_dtypes path) for `suggestion`, written into `out_dir`.

    modify_mixlist only where the script's precision mode accepts it (allow_mix_precision*, mixed_float16,
    mixed_bfloat16: the adapter refuses it otherwise); customize_dtypes works in every mode.
    """
    os.makedirs(out_dir, exist_ok=True)
    mixlist = None
    if mixlist_allowed:
        mixlist = os.path.join(out_dir, "modify_mixlist.json")
        with open(mixlist, "w") as handle:
            handle.write(mixlist_json(suggestion.types))
    customize = os.path.join(out_dir, "customize_dtypes.cfg")
    with open(customize, "w") as handle:
        handle.write("\n".join(customize_lines(graph, suggestion.blocked)) + "\n")
    return mixlist, customize
