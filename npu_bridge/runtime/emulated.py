"""The state an emulated session keeps beside its TensorFlow session: options, the current Program, plans.

The user's tf.Graph stays the session's graph and is only read. Each run checks the graph's version (one
integer compare); when it changed, the graph is rewritten again and the Program extended or rebuilt. A graph
still empty or filled after the session was created is fine: nothing is rewritten before the first run.
The precision lists (operator library + modify_mixlist) and the customize_dtypes file are read when the session
is created, once: a missing or malformed file fails there, as every other configuration error does, and later
edits or deletions of the files do not change a running session.
"""
import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
from tensorflow.python.client import session as tf_session
from tensorflow.python.framework import errors
from tensorflow.python.platform import tf_logging

from npu_bridge import tf_private
from npu_bridge.core.customize_dtypes import load_customize_dtypes
from npu_bridge.core.mixlist import build_precision_lists
from npu_bridge.core.precision import rewrite
from npu_bridge.core.precision.incremental import Rewritten, rewrite_increment
from npu_bridge.core.precision.report import Report
from npu_bridge.core.soc import saturates
from npu_bridge.runtime import log, observers, user_errors
from npu_bridge.runtime.callables import OptionsCallable
from npu_bridge.runtime.plans import Plan, cache_plan, cached_plan, plan_key, subfeeds
from npu_bridge.runtime.program import Program, fingerprints

NPU_OPTIMIZER = "NpuOptimizer"


class EmulatedSession:
    """What a BaseSession configured for the NPU delegates run / make_callable / partial_run / close to.

    It keeps only a weak reference to the TensorFlow session that owns it (for the session handles it returns),
    so that session is freed (and closes this one) exactly as a plain session would be.
    """

    def __init__(self, owner, graph, options, target, config):
        self.owner = weakref.ref(owner)
        self.graph = graph
        self.options = options
        self.lists = build_precision_lists(options)
        self.customize = load_customize_dtypes(options.customize_dtypes, self.lists.library) \
            if options.customize_dtypes else None
        self.target = target
        self.config = inner_config(config)
        self.closed = False
        self.program: Program | None = None
        self._lock = threading.RLock()
        self._partial_runs: dict[Any, Program] = {}
        self._warned = set()    # the report's warnings already logged: a graph rewritten again repeats them
        self._steps = {}        # plan signature -> steps executed (run observers number steps per signature)
        self._running: Rewritten | None = None  # the user GraphDef the program was rewritten from, and its result
        # The device's float16 overflow mode (soc default or set_device_sat_mode), fixed when the session first
        # rewrites its graph: every later rewrite of this session uses it, so the running graph and the ops
        # added to it clamp alike and the report's overflow_mode stays true.
        self.saturation = None
        self.observers = observers.session_observers(self)  # this session's own (dump, overflow detection)

    def plan_for(self, fetches: Sequence[Any], feeds: Sequence[Any]) -> Plan:
        """observers.EmulationView.plan_for: a plan of the running program for a tool's own runs."""
        if self.program is None:
            raise RuntimeError("plan_for: the emulated session has not run yet, so it runs no program to plan in")
        return Plan(self.program, self.graph, list(fetches), list(feeds), self.options.iterations_per_loop,
                    owner=self.owner)

    def run(self, fetches, feed_dict=None, run_options=None, run_metadata=None):
        program = self.current_program()
        key = plan_key(fetches, feed_dict)
        plan = cached_plan(program, key)
        if plan is None:
            plan = self._plan(program, fetches, feed_dict, key)
        if plan.simple_feeds:
            values = feed_dict.values() if feed_dict else ()
        else:
            values = [value for _, value in subfeeds(feed_dict)]
        try:
            return plan.execute(values, run_options, run_metadata, self.stepper())
        except errors.OpError as error:
            raise user_errors.translate(error, self.graph)

    def stepper(self) -> Callable[..., Any] | None:
        """What Plan.execute runs its steps through: None (directly) unless run observers are registered."""
        active = observers.active() + self.observers
        return functools.partial(observers.run_steps, self, active) if active else None

    def next_step(self, plan: Plan) -> int:
        """The number of the step `plan` is about to execute (per signature, from 0)."""
        with self._lock:
            step = self._steps.get(plan.signature, 0)
            self._steps[plan.signature] = step + 1
        return step

    def make_callable(self, fetches, feed_list, accept_options):
        if feed_list is not None and not isinstance(feed_list, (list, tuple)):
            raise TypeError(f"Argument `feed_list` must be a list or tuple. Received: feed_list={feed_list}")
        feed_list = tuple(feed_list or ())
        if not feed_list:
            self._plan(self.current_program(), fetches, None, plan_key(fetches, None))
        if accept_options:
            def run_with_options(*args, options=None, run_metadata=None):
                return self.run(fetches, dict(zip(feed_list, args)), options, run_metadata)
            return run_with_options

        def run_step(*args):
            return self.run(fetches, dict(zip(feed_list, args)))
        return run_step

    def make_callable_from_options(self, callable_options):
        return OptionsCallable(self, callable_options)

    def partial_run_setup(self, fetches, feeds=None):
        program = self.current_program()
        feeds = [] if feeds is None else feeds if isinstance(feeds, (list, tuple)) else [feeds]
        keys = [subfeed for feed in feeds for subfeed in _partial_subfeeds(feed)]
        plan = Plan(program, self.graph, fetches, keys, self.options.iterations_per_loop, owner=self.owner)
        program.graph   # a partial run resolves names through the session's Python graph: make its objects
        try:
            handle = program.session.partial_run_setup(plan.fetch_names + plan.target_names, plan.feed_names)
        except errors.OpError as error:
            raise user_errors.translate(error, self.graph)
        # Handles of earlier inner sessions can no longer run; forget them rather than let them pile up.
        self._partial_runs = {h: p for h, p in self._partial_runs.items() if p is program}
        self._partial_runs[handle] = program
        return handle

    def partial_run(self, handle, fetches, feed_dict=None):
        program = self._partial_runs.get(handle)
        if program is None or program is not self.program:
            raise RuntimeError(f"partial_run handle {handle!r} was not set up by this session's current graph "
                               "(the graph changed after partial_run_setup, or the handle is from another session)")
        pairs = subfeeds(feed_dict) if feed_dict else []
        plan = Plan(program, self.graph, fetches, [k for k, _ in pairs], self.options.iterations_per_loop,
                    owner=self.owner)
        feeds: dict[str, Any] = {}
        fed = []
        for slot, (_, value) in zip(plan.slots, pairs):
            array = slot.convert(value)
            fed.append(array)
            feeds.update(slot.inner_values(array))
        try:
            values = plan.user_values(list(program.session.partial_run(handle, plan.fetch_names, feeds)))
        except errors.OpError as error:
            raise user_errors.translate(error, self.graph)
        return plan.mapper.build_results(
            [None if s is None else values[s] if s >= 0 else fed[~s] for s in plan.sources])

    def current_program(self) -> Program:
        """The Program running the graph as it is now, rewriting first if ops were added since the last run."""
        if self.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        version = self.graph.version
        if version == 0:
            raise RuntimeError("The Session graph is empty. Add operations to the graph before calling run().")
        program = self.program
        if program is None or program.version != version:
            program = self._sync()
        return program

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self.program is not None:
                self.program.close()

    def _sync(self):
        with self._lock:
            # The graph's session-run lock excludes a half-created op (TF 2.15 counts an op in graph.version
            # before it appears in the GraphDef), as TensorFlow's own Session does when it extends its graph.
            with tf_private.session_run_lock(self.graph):
                version = self.graph.version
                graph_def = self.graph.as_graph_def()
            program = self.program
            if program is not None and program.version == version:
                return program
            if self.saturation is None:
                self.saturation = saturates(self.options.soc)
            if program is None:
                result = self._rewrite_all(graph_def)
                program, how = Program(result, version, self.target, self.config), "built"
            elif (increment := self._rewrite_added(program, graph_def)) is not None:
                result = increment.result
                program.extend_to(result, version, added_nodes=increment.added)
                how = "extended with the ops added since the last run (those rewritten alone)"
            else:
                result = self._rewrite_all(graph_def)
                if program.can_extend_to(result, nodes := fingerprints(result.graph_def)):
                    program.extend_to(result, version, nodes)
                    how = "extended with the ops added since the last run"
                else:
                    program, how = self._rebuild(program, result, version)
            self._running = Rewritten(graph_def, result)
            self.program = program
            for observer in observers.active() + self.observers:
                observer.program_ready(self, program)
            log.summary(f"{result.report.summary()} [emulated NPU graph {how}]", first=how == "built")
            for warning in result.report.warnings:
                if warning not in self._warned:
                    self._warned.add(warning)
                    tf_logging.warning("NpuOptimizer %s: %s", self.options.mode_name,
                                       user_errors.with_source_line(warning, self.graph))
            return program

    def _rewrite_all(self, graph_def):
        return rewrite(graph_def, self.options, lists=self.lists, customize=self.customize, log=False,
                       saturation=self.saturation)

    def _rewrite_added(self, program, graph_def):
        """The grown graph rewritten from the running one and the added ops alone, or None (rewrite it all)."""
        running = self._running
        if running is None or running.result is not program.result:
            return None
        return rewrite_increment(running, graph_def, self.options, lists=self.lists, customize=self.customize,
                                 saturation=self.saturation)

    def _rebuild(self, program, result, version):
        lost = program.state_lost_on_rebuild()
        program = program.replace_with(result, version, self.target, self.config)
        if lost:
            # A silent restart of an input pipeline replays data mid-training: say so loudly.
            tf_logging.warning(
                "npu_bridge: ops added between runs changed how the NPU runs existing ops, so the emulated "
                "session was rebuilt: variables keep their values but these start over (iterators from "
                "their first element, queues and tables empty): %s. Build the whole graph before the first "
                "run to avoid this.", ", ".join(lost))
        return program, "rebuilt (variables carried over) after the pass changed existing ops"

    def _plan(self, program, fetches, feed_dict, key):
        pairs = subfeeds(feed_dict) if feed_dict else []
        simple_feeds = len(pairs) == len(feed_dict or ()) and all(k is p for k, (p, _) in zip(feed_dict or (), pairs))
        plan = Plan(program, self.graph, fetches, [k for k, _ in pairs], self.options.iterations_per_loop,
                    simple_feeds=simple_feeds, owner=self.owner)
        if key is not None:
            cache_plan(program, key, plan)
        return plan


def inner_config(config):
    """The user's ConfigProto for the inner plain session: no NpuOptimizer entry, soft placement, and of grappler
    only the passes that remove graph structure (see _STRUCTURAL_PASSES).

    Why not TensorFlow's default passes: on the real system grappler runs on the user's graph before the NPU's
    graph engine inserts its Casts; here it would run on the rewritten graph, where the arithmetic and
    constant-folding rewrites (reassociated sums, constants pushed through or multiplied into convolutions) move
    arithmetic across the rounding points the pass placed, and remapping fuses ops whose float16 boundary must stay.
    They also cost most of the first step: on the Casts and clamps of a rewritten graph they took about as long as
    the whole first step of the plain graph (benchmarks part f). A user's own `optimizers` list or a disabled
    meta-optimizer is kept as given. Where we choose the passes they run once, in the order pruning, function
    inlining, dependency (a second round found nothing to remove on the benchmark graphs yet cost as much as the
    first), and without the MLIR (TFG) pipeline grappler adds to any list: it round-trips the graph through MLIR
    to sink ops into functional If/Case branches and drop unused functions. Those two took a quarter of the first
    step of the 10k-node MLP stack (1.50 -> 1.16 s) and a tenth of ResNet-50's.

    TensorFlow's older graph optimizer (OptimizerOptions, run on every partition after grappler) keeps common
    subexpression elimination but loses constant folding, unless the user chose opt_level L0 and its flags
    themselves: with grappler's constant folding off it had every constant subgraph to evaluate, the zeros that
    initialise each momentum slot included, 0.25 s of ResNet-50's 1.5 s first step. What it folds would give the
    same values at run time (the same CPU kernels compute them), so no value changes.
    """
    inner = config_pb2.ConfigProto()
    inner.CopyFrom(config)
    rewrite_options = inner.graph_options.rewrite_options
    kept = [c for c in rewrite_options.custom_optimizers if c.name != NPU_OPTIMIZER]
    del rewrite_options.custom_optimizers[:]
    rewrite_options.custom_optimizers.extend(kept)
    rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    if not rewrite_options.optimizers:
        passes = _structural_passes(rewrite_options)
        rewrite_options.optimizers.extend(passes)
        if not passes:
            rewrite_options.disable_meta_optimizer = True
        if rewrite_options.meta_optimizer_iterations == rewriter_config_pb2.RewriterConfig.DEFAULT_NUM_ITERS:
            rewrite_options.meta_optimizer_iterations = rewriter_config_pb2.RewriterConfig.ONE
        rewrite_options.disable_tfg_optimizer = True
    optimizer_options = inner.graph_options.optimizer_options
    if optimizer_options.opt_level != config_pb2.OptimizerOptions.L0:
        optimizer_options.opt_level = config_pb2.OptimizerOptions.L0
        optimizer_options.do_common_subexpression_elimination = True
        optimizer_options.do_constant_folding = False
    inner.allow_soft_placement = True
    return inner


# Grappler passes that only remove or inline structure, never change arithmetic: unreachable nodes (pruning),
# function calls inlined (function), Identity and NoOp chains (dependency: the gradient tuples' Identities).
# (The implementation selector cannot be named in the list; a CPU graph calls the CPU implementation anyway.)
_STRUCTURAL_PASSES = (("pruning", "disable_model_pruning"), ("function", "function_optimization"),
                      ("dependency", "dependency_optimization"))


def _structural_passes(rewrite_options):
    """The structural passes the user's RewriterConfig leaves on (a toggle set to OFF, or pruning disabled)."""
    names = []
    for name, toggle in _STRUCTURAL_PASSES:
        value = getattr(rewrite_options, toggle)
        if value is True or value == rewriter_config_pb2.RewriterConfig.OFF:
            continue
        names.append(name)
    return names


def last_report(sess: Any) -> Report:
    """The precision Report of the graph `sess` runs (a tf.compat.v1 session or a MonitoredSession)."""
    tf_sess = sess if isinstance(sess, tf_session.BaseSession) else tf_private.monitored_inner_session(sess)
    emulation = getattr(tf_sess, "_npu_emulation", None)
    if emulation is None:
        raise ValueError(f"{sess!r} is not an emulated NPU session: its ConfigProto has no custom optimizer "
                         f"named '{NPU_OPTIMIZER}' with use_off_line true")
    return emulation.current_program().result.report


def _partial_subfeeds(feed):
    for feed_type, _, _, feed_fn in tf_private.feed_expansions():
        if isinstance(feed, feed_type):
            return feed_fn(feed)
    return [feed]
