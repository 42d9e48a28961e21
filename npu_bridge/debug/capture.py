"""Record the first N steps of a script's training run, so they can be replayed with other precision settings.

The run that counts is the first plan (fetch signature) running reduced ops that computes the chosen metric
tensor and reaches N steps. Recorded: the user's GraphDef and ConfigProto, the variables before its step 0,
and per step the fed values, the source outputs (input pipelines, random ops: stepgraph.py) and the metric's
emulated value. A replay feeds exactly those, so every candidate precision setting sees identical inputs,
whatever the script's own seeding.
"""
import difflib
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf

from npu_bridge.debug.stepgraph import StepGraph
from npu_bridge.runtime import observers, state_transfer


class MetricError(ValueError):
    """The metric tensor named (or the default one) does not exist or is not computed by the run."""


@dataclass
class Recording:
    metric: str                     # user tensor name
    graph_def: object
    config: object                  # the user's ConfigProto (with the NpuOptimizer)
    fetches: list                   # user fetch names of the recorded plan (tensors "n:0" and ops "n")
    variables: dict                 # before step 0
    reduced_dtype: str
    library: object                 # the session's operator library, to tell which ops can run in float32
    report: object
    op_names: list                  # user ops the recorded step executes, in execution order
    steps: list = field(default_factory=list)       # per step: {user tensor name: value} to feed
    metric_values: list = field(default_factory=list)


def _scalar_float(tensor):
    return tensor.dtype.base_dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64) and \
        tensor.shape.rank == 0


class CaptureObserver(observers.RunObserver):
    """Records `steps` steps of the first plan that computes `metric` (None: its first scalar float fetch)."""

    def __init__(self, steps, metric=None, on_done=None, require_reduced=True):
        self.n_steps = steps
        self.require_reduced = require_reduced  # a float32 rerun (probe.py) records plans without reduced ops
        self.metric = metric
        self.on_done = on_done
        self.recording = None
        self.error = None
        self.steps_seen = {}
        self._candidates = {}       # plan signature -> Recording (or None: plan does not qualify)
        self._graphs = {}

    def _metric_of(self, emulation, plan, step_graph):
        if self.metric is not None:
            name = self.metric if ":" in self.metric else self.metric + ":0"
            try:
                tensor = emulation.graph.get_tensor_by_name(name)
            except (KeyError, ValueError):
                names = [t.name for op in emulation.graph.get_operations() for t in op.outputs]
                close = difflib.get_close_matches(name, names, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                self.error = MetricError(f"--fetch {self.metric!r}: the graph has no tensor named {name!r}{hint}")
                return None
            if tensor.name not in step_graph.inner:
                return None
            return tensor
        fetched = [f for f in plan.mapper.unique_fetches() if isinstance(f, tf.Tensor) and _scalar_float(f)]
        return next((t for t in fetched if t.name in step_graph.inner), None)

    def before_step(self, emulation, plan, step):
        self.steps_seen[plan.signature] = step + 1
        if self.recording is not None or self.error is not None:
            return ()
        key = plan.signature
        if step == 0:
            step_graph = StepGraph(emulation, plan)
            qualifies = step_graph.runs_reduced or not self.require_reduced
            metric = self._metric_of(emulation, plan, step_graph) if qualifies else None
            if metric is None:
                self._candidates[key] = None
                return ()
            program = plan.program
            with emulation.graph._session_run_lock():
                graph_def = emulation.graph.as_graph_def()
            self._candidates[key] = Recording(
                metric=metric.name, graph_def=graph_def, config=emulation.owner()._config,
                fetches=[f.name for f in plan.mapper.unique_fetches()],
                variables=state_transfer.read_variables(program.session, program.graph),
                reduced_dtype=program.result.report.reduced_dtype, library=emulation.lists.library,
                report=program.result.report, op_names=[op.name for op in step_graph.ops])
            self._graphs[key] = step_graph
        recording = self._candidates.get(key)
        if recording is None:
            return ()
        step_graph = self._graphs[key]
        return (step_graph.inner[recording.metric], *step_graph.sources)

    def after_step(self, record):
        key = record.plan.signature
        recording = self._candidates.get(key)
        if recording is None or self.recording is not None:
            return
        step_graph = self._graphs[key]
        feeds = {}
        for slot in record.plan.slots:
            if slot.targets:
                name = slot.user_tensor.name
                value = record.feeds.get(name)
                feeds[name] = value if value is not None else \
                    np.asarray(record.feeds[slot.targets[0][0]]).astype(slot.dtype)
        feeds.update((name, record.extra[name]) for name in step_graph.sources)
        recording.steps.append(feeds)
        recording.metric_values.append(np.asarray(record.extra[step_graph.inner[recording.metric]], np.float64))
        if len(recording.steps) == self.n_steps:
            self.recording = recording
            self._candidates.clear()
            self._graphs.clear()
            if self.on_done is not None:
                self.on_done(recording)

    def close(self):
        self._candidates.clear()
        self._graphs.clear()

    def failure(self, script):
        """Why no recording was made, as one sentence for the user."""
        if self.error is not None:
            return str(self.error)
        if not self.steps_seen:
            return (f"{script} ran no emulated NPU session: no tf.compat.v1 Session with an NpuOptimizer custom "
                    "optimizer (use_off_line true) ran a step")
        what = f"computes {self.metric!r}" if self.metric else "fetches a scalar float tensor (the loss)"
        longest = max(self.steps_seen.values())
        return (f"no run of {script} that {what} and runs reduced ops reached {self.n_steps} steps (its longest "
                f"run signature took {longest} steps){'' if self.metric else '; name the tensor with --fetch'}")
