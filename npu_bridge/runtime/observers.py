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
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

_lock = threading.Lock()


# The views are read-only (properties): a tool reads them and never assigns, and an implementation may hold a
# narrower type (EmulatedSession.program is a Program). mypy checks that the runtime's classes implement them.

@runtime_checkable
class RewriteView(Protocol):
    """The pass's result a program runs (core.precision.RewriteResult implements it)."""

    @property
    def graph_def(self) -> Any:
        """The reduced GraphDef the inner session runs."""

    @property
    def report(self) -> Any:
        """Its core.precision.Report (per-op records, summary, reduced_dtype)."""

    @property
    def tensor_map(self) -> Mapping[str, Any]:
        """User tensor name -> TensorRef (.name, .dtype) of the inner tensor holding it."""


@runtime_checkable
class FeedSlotView(Protocol):
    """One fed user tensor of a plan (runtime.plans.FeedSlot implements it)."""

    @property
    def user_tensor(self) -> Any:
        """The user's tf.Tensor."""

    @property
    def dtype(self) -> Any:
        """Its numpy dtype."""

    @property
    def targets(self) -> Sequence[tuple[str, Any, Any]]:
        """(inner tensor name, numpy dtype, dtype rounded through or None) of each inner tensor it feeds."""


@runtime_checkable
class FetchStructureView(Protocol):
    """The user's fetch structure of a plan (Session.run's fetch mapper)."""

    def unique_fetches(self) -> Sequence[Any]:
        """The user's tensors and operations it fetches, each once, in order."""
        ...


@runtime_checkable
class ProgramView(Protocol):
    """What observers read of the program a session runs (runtime.program.Program implements it)."""

    @property
    def graph(self) -> Any:
        """The inner tf.Graph (its Python objects made when first read)."""

    @property
    def result(self) -> RewriteView:
        """The pass's result: the reduced graph, its report, the tensor map."""

    @property
    def version(self) -> int:
        """Grows each time the program is extended or rebuilt."""

    @property
    def session(self) -> Any:
        """The inner tf.compat.v1.Session."""


@runtime_checkable
class PlanView(Protocol):
    """What observers read of one executed plan (runtime.plans.Plan implements it)."""

    @property
    def program(self) -> ProgramView:
        """The program the plan runs in."""

    @property
    def signature(self) -> Hashable:
        """The (fetch structure, feed keys) pair: steps are numbered per signature."""

    @property
    def fetch_names(self) -> Sequence[str]:
        """Inner tensors fetched, in order."""

    @property
    def feed_names(self) -> Sequence[str]:
        """Inner tensors fed, in order."""

    @property
    def target_names(self) -> Sequence[str]:
        """Inner ops run."""

    @property
    def slots(self) -> Sequence[FeedSlotView]:
        """One per fed user tensor."""

    @property
    def mapper(self) -> FetchStructureView:
        """The user's fetch structure."""

    @property
    def sources(self) -> Sequence[int | None]:
        """Per unique fetch: its index in the fetched values, ~i for the i-th feed (a fed tensor fetched), None
        for an op."""

    def execute(self, feed_values: Sequence[Any]) -> Sequence[Any]:
        """Run the plan's inner work once with `feed_values` (one per slot); the fetched values."""
        ...


@runtime_checkable
class EmulationView(Protocol):
    """What observers read of the emulated session (runtime.emulated.EmulatedSession implements it)."""

    @property
    def graph(self) -> Any:
        """The user's tf.Graph."""

    @property
    def options(self) -> Any:
        """Its NpuOptions (core.options)."""

    @property
    def lists(self) -> Any:
        """Its PrecisionLists (core.mixlist); .library is the operator library read."""

    @property
    def config(self) -> Any:
        """The inner session's ConfigProto (the user's, without the NpuOptimizer)."""

    @property
    def owner(self) -> Any:
        """A weak reference to the user's tf.compat.v1.Session (call it)."""

    @property
    def program(self) -> ProgramView | None:
        """The program it runs (None before the first run)."""

    def plan_for(self, fetches: Sequence[Any], feeds: Sequence[Any]) -> PlanView:
        """A plan of the running program computing the user's tensors `fetches` with the user's tensors `feeds`
        fed, as a run with that feed_dict would; for a tool's own runs (`execute`): no step is counted and no
        observer is told."""
        ...


class RunObserver:
    """Base class with no-op hooks; subclasses override what they need. Hooks run on the thread calling `run`."""

    def program_ready(self, emulation: EmulationView, program: ProgramView) -> None:
        """The session now runs `program` (built, extended or rebuilt)."""

    def before_step(self, emulation: EmulationView, plan: PlanView, step: int) -> Iterable[str]:
        """Inner tensor names (in `plan.program.graph`) to fetch in this step's execution too."""
        return ()

    def after_step(self, record: "StepRecord") -> None:
        """A step ran; `record` is a StepRecord."""


SessionFactory = Callable[[EmulationView], RunObserver | None]
_observers: tuple[RunObserver, ...] = ()
_session_factories: tuple[SessionFactory, ...] = ()


@dataclass(frozen=True)
class StepRecord:
    """One executed step of an emulated session, as observers see it."""

    emulation: EmulationView
    plan: PlanView                  # the plan executed
    step: int                       # per signature, from 0
    feeds: Mapping[str, Any]        # inner tensor name -> value fed (already rounded where the NPU rounds)
    results: Sequence[Any]          # values of plan.fetch_names, in order (cast back to the user's dtypes)
    extra: Mapping[str, Any]        # inner tensor name -> value, for the names observers asked for


def add_observer(observer: RunObserver) -> None:
    """Register `observer` for every emulated session in this process."""
    global _observers
    with _lock:
        if observer not in _observers:
            _observers = (*_observers, observer)


def remove_observer(observer: RunObserver) -> None:
    global _observers
    with _lock:
        _observers = tuple(o for o in _observers if o is not observer)


def active() -> tuple[RunObserver, ...]:
    """The registered observers (a tuple; empty when none)."""
    return _observers


def add_session_factory(factory: SessionFactory) -> None:
    """Register `factory(emulation) -> RunObserver | None`, asked once by each new emulated session."""
    global _session_factories
    with _lock:
        if factory not in _session_factories:
            _session_factories = (*_session_factories, factory)


def session_observers(emulation: EmulationView) -> tuple[RunObserver, ...]:
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
        requested: dict[str, None] = {}       # inner name -> None, in the order observers name them, once each
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
