"""Record N steps of a script's training run, so they can be replayed with other precision settings.

A real script runs several graphs (plans: fetch signatures) in one process: a feature extraction, the training
step, `.eval()` calls. The run that counts is the graph that trains (it runs an optimizer's update) that
computes the metric, the scalar float it fetches with the update (its loss) unless --fetch names one; without
a training graph, the graph running most reduced ops. Graphs lacking a named --fetch tensor are skipped and
named. Under dynamic loss scaling the recording starts at the first step the scale lets through (from 2^32
the scale first has to fall, skipping steps as on hardware: those are not a precision problem).

Recorded: the user's GraphDef and ConfigProto, the variables before the first recorded step, and per step the
fed values, the source outputs (input pipelines, random ops: stepgraph.py) and the metric's emulated value. A
replay feeds exactly those, so every candidate precision setting sees identical inputs, whatever the
script's own seeding.
"""
import difflib
import re
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf

from npu_bridge import tf_private
from npu_bridge.core.options import PrecisionMode
from npu_bridge.debug import lossscale
from npu_bridge.debug.stepgraph import StepGraph, source_line
from npu_bridge.runtime import observers, steps

# Steps dynamic loss scaling may skip before the recording starts anyway (from 2^32 about a hundred).
SKIPPED_LIMIT = 500


@dataclass
class Recording:
    metric: str                     # user tensor name
    graph_def: object
    config: object                  # the user's ConfigProto (with the NpuOptimizer)
    fetches: list                   # user fetch names of the recorded plan (tensors "n:0" and ops "n")
    variables: dict                 # before the first recorded step
    reduced_dtype: str
    library: object                 # the session's operator library, to tell which ops can run in float32
    report: object
    op_names: list                  # user ops the recorded step executes, in execution order
    steps: list = field(default_factory=list)       # per step: {user tensor name: value} to feed
    metric_values: list = field(default_factory=list)
    start: int = 0                  # the plan's step number of the first recorded step
    trains: bool = False            # the recorded graph runs an optimizer's update
    mixlist_allowed: bool = True    # the script's precision mode accepts modify_mixlist
    mode_name: str = ""             # the script's precision mode, as the session reports it
    loss_scaling: object = None     # lossscale.LossScaling of the recorded graph, or None
    skipped: list = field(default_factory=list)     # messages of the steps loss scaling skipped before start
    sources: dict = field(default_factory=dict)     # user op name -> the user's line that created it
    partial: bool = False           # the script ended before the steps asked for: fewer were recorded
    unused: set = field(default_factory=set)        # ops whose value the step does not use (stepgraph.used_ops)

    @property
    def step_numbers(self):
        return list(range(self.start, self.start + len(self.steps)))


@dataclass
class _Candidate:
    """One plan being considered: its step graph, metric and (once its first recorded step ran) recording."""
    step_graph: object
    metric: object
    metric_inner: str               # the inner tensor holding the metric's emulated value
    scaling: object
    scaling_inner: dict             # user tensor name -> inner name, for the LossScaling's tensors
    snapshot: dict | None = None
    recording: Recording | None = None
    skipped: list = field(default_factory=list)


def _scalar_float(tensor):
    return tensor.dtype.base_dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64) and \
        tensor.shape.rank == 0


_GRADIENT_OP = re.compile(r"^(?P<scope>(?:.*/)?)gradients(?:_\d+)?/(?P<forward>.+?)_grad/")


def _minimized_loss(emulation, step_graph):
    """The scalar float a training step minimizes when the script fetches only the update (`train_op.run()`,
    the loss read by a separate `.eval()`): the forward op whose gradient tf.gradients starts from grad_ys
    (`gradients/<loss>_grad/...` reads `gradients/grad_ys_0`). The step itself may not compute it (a sum's
    gradient does not read the sum): it is fetched as well."""
    for op in step_graph.ops:
        if op.type != "Fill" or not op.name.endswith("grad_ys_0"):
            continue
        for consumer in op.outputs[0].consumers():
            found = _GRADIENT_OP.match(consumer.name)
            if found is None:
                continue
            try:
                forward = emulation.graph.get_operation_by_name(found.group("scope") + found.group("forward"))
            except KeyError:
                continue
            if forward.outputs and _scalar_float(forward.outputs[0]) and \
                    step_graph.inner_name(forward.outputs[0].name) is not None:
                return forward.outputs[0]
    return None


class CaptureObserver(observers.RunObserver):
    """Records `steps` steps of the graph that trains and computes `metric` (None: the scalar float it fetches).

    start: the plan's step to start at (a rerun recording the window its recording chose); None: step 0, or
    under dynamic loss scaling the first step applied. on_done(recording) is called once a training graph's
    recording is complete (the CLI stops the script there); a recording of a graph that does not train is
    kept in reserve and chosen at close() when no training graph completed one.
    """

    def __init__(self, steps, metric=None, on_done=None, require_reduced=True, start=None):
        self.n_steps = steps
        self.require_reduced = require_reduced  # a float32 rerun (probe.py) records plans without reduced ops
        self.metric = metric
        self.on_done = on_done
        self.start = start
        self.recording = None
        self.steps_seen = {}
        self.skipped_graphs = []    # "graph fetching X: why", for graphs not considered
        self._candidates = {}       # plan signature -> _Candidate (or None: plan does not qualify)
        self._reserve = []          # complete recordings of graphs that do not train

    def _metric_of(self, emulation, plan, step_graph):
        fetches = ", ".join(f.name for f in plan.mapper.unique_fetches())
        if self.metric is not None:
            name = self.metric if ":" in self.metric else self.metric + ":0"
            try:
                tensor = emulation.graph.get_tensor_by_name(name)
            except (KeyError, ValueError):
                names = [t.name for op in emulation.graph.get_operations() for t in op.outputs]
                close = difflib.get_close_matches(name, names, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                self.skipped_graphs.append(f"the graph fetching {fetches}: it has no tensor named {name!r}{hint}")
                return None
            # A training step may not compute its loss (a sum's gradient does not read the sum): fetched as well.
            computed = tensor.name in step_graph.inner or \
                step_graph.trains and _scalar_float(tensor) and step_graph.inner_name(tensor.name) is not None
            if not computed:
                self.skipped_graphs.append(f"the graph fetching {fetches}: its step does not compute {name!r}")
                return None
            return tensor
        fetched = [f for f in plan.mapper.unique_fetches() if isinstance(f, tf.Tensor) and _scalar_float(f)]
        metric = next((t for t in fetched if t.name in step_graph.inner), None)
        if metric is None and step_graph.trains:
            metric = _minimized_loss(emulation, step_graph)
        return metric

    def _candidate(self, emulation, plan):
        step_graph = StepGraph(emulation, plan)
        if not (step_graph.runs_reduced or not self.require_reduced):
            return None
        metric = self._metric_of(emulation, plan, step_graph)
        if metric is None:
            return None
        scaling = lossscale.find(step_graph.ops)
        names = scaling.tensors() if scaling is not None else ()
        inner = {name: step_graph.inner_name(name) for name in names}
        metric_inner = step_graph.inner.get(metric.name) or step_graph.inner_name(metric.name)
        return _Candidate(step_graph, metric, metric_inner, scaling, {k: v for k, v in inner.items() if v is not None})

    def _start(self, emulation, plan, candidate, step):
        program = plan.program
        with tf_private.session_run_lock(emulation.graph):
            graph_def = emulation.graph.as_graph_def()
        options = emulation.options
        step_graph = candidate.step_graph
        return Recording(
            metric=candidate.metric.name, graph_def=graph_def, config=tf_private.session_config(emulation.owner()),
            fetches=[f.name for f in plan.mapper.unique_fetches()], variables=candidate.snapshot,
            reduced_dtype=program.result.report.reduced_dtype, library=emulation.lists.library,
            report=program.result.report, op_names=[op.name for op in step_graph.ops], start=step,
            trains=step_graph.trains, mixlist_allowed=options.mode in (PrecisionMode.MIXED_FP16,
                                                                       PrecisionMode.MIXED_BF16),
            mode_name=options.mode_name, loss_scaling=candidate.scaling, skipped=list(candidate.skipped),
            sources={op.name: source_line(op) for op in step_graph.ops}, unused=set(step_graph.unused))

    def before_step(self, emulation, plan, step):
        self.steps_seen[plan.signature] = step + 1
        if self.recording is not None:
            return ()
        key = plan.signature
        if key not in self._candidates:
            self._candidates[key] = self._candidate(emulation, plan) if step == 0 else None
        candidate = self._candidates[key]
        if candidate is None or candidate.recording is not None and len(candidate.recording.steps) >= self.n_steps:
            return ()
        if self.start is not None and step < self.start:
            return ()
        if candidate.recording is None:
            program = plan.program
            candidate.snapshot = steps.read_variables(program.session, program.graph)
        step_graph = candidate.step_graph
        extra = (candidate.metric_inner, *step_graph.sources)
        return extra + tuple(candidate.scaling_inner.values())

    def after_step(self, record):
        candidate = self._candidates.get(record.plan.signature)
        if candidate is None or self.recording is not None or candidate.snapshot is None and \
                candidate.recording is None:
            return
        if candidate.recording is None:
            if self._waits_for_loss_scale(candidate, record):
                return
            candidate.recording = self._start(record.emulation, record.plan, candidate, record.step)
            candidate.snapshot = None
        recording = candidate.recording
        if len(recording.steps) >= self.n_steps:
            return
        step_graph = candidate.step_graph
        feeds = {}
        for slot in record.plan.slots:
            if slot.targets:
                name = slot.user_tensor.name
                value = record.feeds.get(name)
                feeds[name] = value if value is not None else \
                    np.asarray(record.feeds[slot.targets[0][0]]).astype(slot.dtype)
        feeds.update((name, record.extra[name]) for name in step_graph.sources)
        recording.steps.append(feeds)
        recording.metric_values.append(np.asarray(record.extra[candidate.metric_inner], np.float64))
        if len(recording.steps) < self.n_steps:
            return
        if not recording.trains:
            self._reserve.append((step_graph.reduced_ops, recording))
            return
        self.recording = recording
        self._candidates.clear()
        if self.on_done is not None:
            self.on_done(recording)

    def _waits_for_loss_scale(self, candidate, record):
        """Is this step one dynamic loss scaling skipped, before the recording starts? (It is noted.)"""
        scaling, inner = candidate.scaling, candidate.scaling_inner
        if self.start is not None or scaling is None or not scaling.dynamic or scaling.applied not in inner:
            return False
        if bool(np.asarray(record.extra[inner[scaling.applied]])) or len(candidate.skipped) >= SKIPPED_LIMIT:
            return False
        candidate.skipped.append(lossscale.skipped_message(
            record.step, *lossscale.scales(scaling, inner, record, candidate.snapshot)))
        candidate.snapshot = None
        return True

    def close(self):
        if self.recording is None and self._reserve:
            self.recording = max(self._reserve, key=lambda pair: pair[0])[1]
        if self.recording is None:
            # The script ended (an Estimator's NaN-loss hook stops it at the first NaN) before n steps: a training
            # graph's shorter recording is still the run the user means.
            partial = [c.recording for c in self._candidates.values()
                       if c is not None and c.recording is not None and c.recording.trains and c.recording.steps]
            if partial:
                self.recording = partial[0]
                self.recording.partial = True
        self._candidates.clear()
        self._reserve.clear()

    def failure(self, script):
        """Why no recording was made, as one sentence for the user."""
        if not self.steps_seen:
            return (f"{script} ran no emulated NPU session: no tf.compat.v1 Session with an NpuOptimizer custom "
                    "optimizer (use_off_line true) ran a step")
        if self.metric and self.skipped_graphs:
            return f"no graph of {script} computes {self.metric!r}: " + "; ".join(self.skipped_graphs)
        what = f"computes {self.metric!r}" if self.metric else "fetches a scalar float tensor (the loss)"
        longest = max(self.steps_seen.values())
        return (f"no run of {script} that {what} and runs reduced ops reached {self.n_steps} steps (its longest "
                f"run signature took {longest} steps){'' if self.metric else '; name the tensor with --fetch'}")
