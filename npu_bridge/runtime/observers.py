"""Run observers: the one way tools built on top see what the emulated session computes.

Dumps, overflow detection, comparison against float32 and CI artifacts are rooms of their own. Rather than grow
branches inside the session, they register an observer here. An observer sees

- every Program the session builds or extends (`program.result` holds the rewritten GraphDef and its Report), and
- every step: one execution of a plan's fetches, that is one `run` (one loop iteration under
  iterations_per_loop), numbered from 0 per fetch-and-feed signature, as the NPU numbers the iterations of each
  graph it runs. Before a step an observer may name extra inner tensors to fetch in the same execution; after it,
  it gets the fed values, the fetched values and those extras.

Observers registered with `add_observer` see every emulated session in the process. A tool that serves only the
sessions whose options ask for it (dump, overflow detection: `npu_bridge.debug`) registers a session factory
instead: each new emulated session asks every factory once and keeps the observers they return as its own.

With no observer registered a run costs one empty-tuple check.
"""
import threading
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

_lock = threading.Lock()
_observers = ()
_session_factories = ()


class RunObserver:
    """Base class with no-op hooks; subclasses override what they need. Hooks run on the thread calling `run`."""

    def program_ready(self, emulation, program):
        """The session (an EmulatedSession) now runs `program` (built, extended or rebuilt)."""

    def before_step(self, emulation, plan, step):
        """Inner tensor names (in `plan.program.graph`) to fetch in this step's execution too."""
        return ()

    def after_step(self, record):
        """A step ran; `record` is a StepRecord."""


@dataclass(frozen=True)
class StepRecord:
    """One executed step of an emulated session, as observers see it."""

    emulation: Any                  # the EmulatedSession (.graph is the user's graph, .options its NpuOptions)
    plan: Any                       # the Plan executed (.program, .fetch_names, .target_names, .feed_names)
    step: int                       # per signature, from 0
    feeds: Mapping[str, Any]        # inner tensor name -> value fed (already rounded where the NPU rounds)
    results: Sequence[Any]          # values of plan.fetch_names, in order (cast back to the user's dtypes)
    extra: Mapping[str, Any]        # inner tensor name -> value, for the names observers asked for


def add_observer(observer):
    """Register `observer` for every emulated session in this process."""
    global _observers
    with _lock:
        if observer not in _observers:
            _observers = (*_observers, observer)


def remove_observer(observer):
    global _observers
    with _lock:
        _observers = tuple(o for o in _observers if o is not observer)


def active():
    """The registered observers (a tuple; empty when none)."""
    return _observers


def add_session_factory(factory):
    """Register `factory(emulation) -> RunObserver | None`, asked once by each new emulated session."""
    global _session_factories
    with _lock:
        if factory not in _session_factories:
            _session_factories = (*_session_factories, factory)


def session_observers(emulation):
    """The observers the registered factories make for a new emulated session (a tuple; usually empty)."""
    made = (factory(emulation) for factory in _session_factories)
    return tuple(observer for observer in made if observer is not None)


def run_steps(emulation, observers, plan, args, run_options, run_metadata):
    """Execute `plan` (its `repeats` iterations) step by step, telling `observers`; returns the last results."""
    results = []
    count = len(plan.fetch_names)
    feeds = dict(zip(plan.feed_names, args))
    # A tensor the plan fetches already is not fetched a second time: a distributed (gRPC) session cannot answer
    # a call naming one tensor twice. Observers get its value from the plan's own fetch, as fetched (not widened).
    own = {name: i for i, name in enumerate(plan.fetch_names)}
    for _ in range(plan.repeats):
        step = emulation.next_step(plan)
        requested = {}       # inner name -> None, in the order observers name them, once each
        for observer in observers:
            for name in observer.before_step(emulation, plan, step) or ():
                requested.setdefault(name)
        extra = tuple(name for name in requested if name not in own)
        call = plan.callable_for(run_options, extra)
        values = call(*args) if run_metadata is None else call(*args, run_metadata=run_metadata)
        positions = {**own, **{name: count + i for i, name in enumerate(extra)}}
        results = plan.user_values(values[:count])
        record = StepRecord(emulation, plan, step, feeds, results, {name: values[positions[name]] for name in requested})
        for observer in observers:
            observer.after_step(record)
    return results
