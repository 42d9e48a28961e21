"""Execution plans: how one (fetch structure, feed keys) pair of a user `run` maps onto the inner session.

A plan is built once per pair and cached on the Program, like a `make_callable`: user fetches resolve to inner
tensors (a cached Cast back to the user's dtype where the pass changed it), feeds to the inner tensors that carry
the user tensor's value, and the inner work is a C++ callable. The hot path only converts feed values and calls it.
"""
import itertools
import random
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2
from tensorflow.python.framework import errors
from tensorflow.python.ops import session_ops
from tensorflow.python.util import nest

from npu_bridge import tf_private
from npu_bridge.core.contract import (
    CLAMP_OPS, ITERATIONS_PER_LOOP_ATTR, MARK_CAST, MARK_SATURATION, MARKER, VARIABLE_OPS,
)
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.runtime import user_errors
from npu_bridge.runtime.inner_ops import InnerOps, producer
from npu_bridge.runtime.program import Program

_LEAF_TYPES = (tf.Tensor, tf.Operation, tf.Variable, str, tf.SparseTensor, tf.IndexedSlices)
# Plain TensorFlow keeps an executor for every (feeds, fetches, targets) it ever ran; the bound here only keeps a
# script that builds new fetch tensors at every run from growing without end. Past it one plan at random makes
# room: a script cycling through more fetch sets than the bound still finds most of them cached (evicting the
# oldest, or everything, would miss on every run of such a cycle).
_MAX_CACHED_PLANS = 4096
_eviction = random.Random(0)
_HANDLE_OPS = ("GetSessionHandle", "GetSessionHandleV2")
_ITERATOR_INITIALIZER = "MakeIterator"     # what `iterator.initializer` runs
# (inner tensor name, its numpy dtype, the dtype the fed value is rounded through first or None)
FeedTarget = tuple[str, np.dtype, "np.dtype | None"]
# runtime.observers' run_steps: executes a plan's steps (plan, inner feed values, run options, run metadata)
Stepper = Callable[["Plan", list[Any], Any, Any], Iterable[Any]]


def plan_key(fetches: Any, feed_dict: Mapping[Any, Any] | None) -> Hashable | None:
    """A key for (fetch structure, feed keys), or None when the structure cannot be keyed safely.

    Leaves are keyed by identity (graph tensors hash by id) and the key holds them, so ids are never reused.
    """
    try:
        return _fetch_key(fetches), tuple(feed_dict) if feed_dict else ()
    except TypeError:
        return None


def cached_plan(program: Program, key: Hashable | None) -> "Plan | None":
    """The cached plan for `key`, or None (also when a leaf of the key turns out to be unhashable)."""
    if key is None:
        return None
    try:
        return program.plans.get(key)
    except TypeError:
        return None


def _fetch_key(fetch: Any) -> Hashable:
    kind = type(fetch)
    if kind is list or kind is tuple:
        return (kind, *map(_fetch_key, fetch))
    if isinstance(fetch, _LEAF_TYPES):
        return fetch
    if isinstance(fetch, dict):
        return (kind, *((k, _fetch_key(v)) for k, v in fetch.items()))
    if isinstance(fetch, tuple):
        return (kind, *map(_fetch_key, fetch))
    raise TypeError("unkeyable fetch")


def subfeeds(feed_dict: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """TensorFlow's feed normalization: tuple keys flattened, SparseTensor / IndexedSlices keys expanded."""
    pairs = []
    for feed, value in nest.flatten_dict_items(feed_dict).items():
        for feed_type, _, feed_fn, _ in tf_private.feed_expansions():
            if isinstance(feed, feed_type):
                pairs.extend(feed_fn(feed, value))
                break
    return pairs


class FeedSlot:
    """One fed user tensor: its checks and conversions, and the inner tensors that receive its value.

    targets: (inner tensor name, its numpy dtype, the dtype the value is rounded through first or None).
    """

    def __init__(self, user_tensor: Any, targets: list[FeedTarget]) -> None:
        self.user_tensor = user_tensor
        self.dtype = np.dtype(user_tensor.dtype.base_dtype.as_numpy_dtype)
        self.shape = user_tensor.get_shape()
        self.dims = None if self.shape.rank is None else tuple(self.shape.as_list())
        self.targets = targets

    def inner_values(self, array: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
        """(inner tensor, value) for each target of a converted fed `array`, rounded as the NPU holds it."""
        for name, dtype, rounding in self.targets:
            rounded = array if rounding is None else array.astype(rounding)
            yield name, rounded if rounded.dtype == dtype else rounded.astype(dtype)

    def convert(self, value: Any) -> np.ndarray:
        """The fed value as the user's dtype, with TensorFlow's own checks and messages."""
        if isinstance(value, session_ops.TensorHandle):
            # TensorFlow resolves a fed handle inside the session that holds its tensor; the inner session's C++
            # callable cannot, and its rounding must see the values, so the handle is read back first.
            value = value.eval()
        if isinstance(value, tf.Tensor):
            raise TypeError(
                "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include Python scalars, "
                f"strings, lists, numpy ndarrays, or TensorHandles. For reference, the tensor object was {value} "
                f"which was passed to the argument `feed_dict` with key {self.user_tensor}.")
        if type(value) is int and self.dtype != object and \
                tf_private.convert_to_numpy_obj(self.dtype.type, value) != value:
            raise TypeError(
                f"Type of feed value {value} with type {type(value)} is not compatible with Tensor type "
                f"{self.dtype.type}. Try explicitly setting the type of the feed tensor to a larger type (e.g. int64).")
        array = np.asarray(value, dtype=self.dtype)
        if not self._shape_fits(array.shape):
            raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor {self.user_tensor.name}, "
                             f"which has shape {self.shape}")
        return array

    def _shape_fits(self, shape: tuple[int, ...]) -> bool:
        dims = self.dims
        if dims is None:
            return True
        return len(dims) == len(shape) and all(d is None or d == s for d, s in zip(dims, shape))


class Plan:
    """The inner callable and result mapping for one fetch structure and one set of feed keys.

    The inner graph is addressed by name (fetch_names, target_names, feed_names), through program.ops: building
    a plan makes no Python objects for the inner graph (see runtime.inner_ops).
    """

    def __init__(self, program: Program, user_graph: Any, fetches: Any, feed_keys: Iterable[Any],
                 iterations_per_loop: int, simple_feeds: bool = True,
                 connections: Iterable[tuple[str, str]] = (), owner: Any = None) -> None:
        self.program = program
        self.owner = owner  # weakref to the user's session: fetched session handles belong to it
        self.simple_feeds = simple_feeds  # feed_dict.values() line up with the slots (no tuple / sparse keys)
        self.slots = [_feed_slot(program, user_graph, key) for key in feed_keys]
        fed = {slot.user_tensor.ref(): i for i, slot in enumerate(self.slots)}
        for i, slot in enumerate(self.slots):
            if fed[slot.user_tensor.ref()] != i:
                slot.targets = []   # a later key names the same tensor ("x:0" and x): its value wins, as in TensorFlow
        # inner tensor name -> the user tensor whose fed value it takes
        landing = _feed_landing(self.slots)
        # CallableOptions.tensor_connection (tf.keras feeds a placeholder from a tensor): inner (from, to) names.
        self.connections = [pair for source, destination in connections
                            for pair in _connection(program, user_graph, source, destination)]
        with user_graph.as_default():
            self.mapper = tf_private.fetch_mapper(fetches)
        self.sources: list[int | None] = []   # per unique fetch: index in fetch_names, ~slot of a fed one, None
        self.fetch_names: list[str] = []
        self.target_names: list[str] = []
        # index in self.fetch_names -> dtype of the tensor a fetched session handle stands for
        self.handles: dict[int, Any] = {}
        # index in self.fetch_names -> numpy dtype its reduced value is widened to (_fetch_source)
        self.widened: dict[int, np.dtype] = {}
        self.repeats = 1
        for fetch in self.mapper.unique_fetches():
            if isinstance(fetch, tf.Operation):
                _assert_fetchable(user_graph, fetch)
                if fetch.name not in program.ops:
                    raise KeyError(f"The name '{fetch.name}' refers to an Operation not in the emulated NPU graph.")
                self.sources.append(None)
                self.target_names.append(fetch.name)
                self.repeats = max(self.repeats, _iterations(fetch, iterations_per_loop))
            else:
                _assert_fetchable(user_graph, fetch.op)
                if fetch.ref() in fed:
                    self.sources.append(~fed[fetch.ref()])
                    continue
                self.sources.append(len(self.fetch_names))
                if fetch.op.type in _HANDLE_OPS:
                    self.handles[len(self.fetch_names)] = fetch.op.inputs[0].dtype
                name, widened = _fetch_source(program, fetch, landing)
                if widened is not None:
                    self.widened[len(self.fetch_names)] = widened
                self.fetch_names.append(name)
                _check_fetch_not_fed(program, fetch, name, landing)
        self.feed_names = [name for slot in self.slots for name, _, _ in slot.targets]
        # iterator initializers this run starts (a rebuilt program starts them again: Program.replace_with)
        self.iterator_initializers = [name for name in self.target_names
                                      if program.ops.op_type(name) == _ITERATOR_INITIALIZER]
        # Fetches that may share a variable's buffer: the C++ callable hands them back without the copy Session.run
        # makes, so a later update of the variable would change an array the user already holds.
        self.copies = [i for i, name in enumerate(self.fetch_names) if _may_share_variable_buffer(program.ops, name)]
        self._callables: dict[Hashable, Callable[..., Any]] = {}

    def execute(self, values: Sequence[Any], run_options: Any = None, run_metadata: Any = None,
                stepper: Stepper | None = None) -> Any:
        """Run with `values` (one per feed slot) and return results shaped like the user's fetches.

        `stepper(plan, args, run_options, run_metadata)`, when given, executes the steps instead (run observers).
        """
        fed: list[np.ndarray] = []
        args: list[Any] = []
        for slot, value in zip(self.slots, values):
            array = slot.convert(value)
            fed.append(array)
            args.extend(value for _, value in slot.inner_values(array))
        results: list[Any] = []
        if (self.fetch_names or self.target_names) and stepper is not None:
            results = list(stepper(self, args, run_options, run_metadata))
        elif self.fetch_names or self.target_names:
            call = self.callable_for(run_options)
            for _ in range(self.repeats):
                results = call(*args) if run_metadata is None else call(*args, run_metadata=run_metadata)
            results = self.user_values(results)
        if self.iterator_initializers:
            self.program.record_iterator_initializers(self.iterator_initializers, self.feed_names, args)
        for index in self.copies:
            if isinstance(results[index], np.ndarray):     # a 0-d value comes as a numpy scalar: keep it one
                results[index] = results[index].copy()
        for index, dtype in self.handles.items():
            results[index] = session_ops.TensorHandle(results[index], dtype, self.owner())
        return self.mapper.build_results(
            [None if s is None else results[s] if s >= 0 else fed[~s] for s in self.sources])

    def user_values(self, values: list[Any]) -> list[Any]:
        """The values of fetch_names (a list, changed in place) with those held reduced widened to the user's dtype."""
        for index, dtype in self.widened.items():
            values[index] = values[index].astype(dtype)
        return values

    @property
    def signature(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """(fetch, target, feed) inner names: the same for the same user run across rebuilds of the program."""
        return tuple(self.fetch_names), tuple(self.target_names), tuple(self.feed_names)

    def callable_for(self, run_options: Any, extra_fetches: tuple[str, ...] = ()) -> Callable[..., Any]:
        """The inner C++ callable; `extra_fetches` (inner tensor names) are fetched after the plan's own."""
        key: Hashable = run_options.SerializeToString() if run_options is not None else b""
        if extra_fetches:
            key = (key, extra_fetches)
        call = self._callables.get(key)
        if call is None:
            options = config_pb2.CallableOptions()
            options.feed.extend(self.feed_names)
            options.fetch.extend(self.fetch_names)
            options.fetch.extend(extra_fetches)
            options.target.extend(self.target_names)
            for source, destination in self.connections:
                options.tensor_connection.add(from_tensor=source, to_tensor=destination)
            if run_options is not None:
                options.run_options.CopyFrom(run_options)
            with self.program.lock:
                call = self._callables.setdefault(
                    key, tf_private.make_callable_from_options(self.program.session, options))
        return call


def cache_plan(program: Program, key: Hashable | None, plan: Plan) -> None:
    try:
        hash(key)
    except TypeError:
        return
    with program.lock:
        plans = program.plans
        if len(plans) >= _MAX_CACHED_PLANS and key not in plans:
            del plans[next(itertools.islice(plans, _eviction.randrange(len(plans)), None))]
        plans[key] = plan


def _feed_slot(program: Program, user_graph: Any, feed: Any) -> FeedSlot:
    try:
        tensor = user_graph.as_graph_element(feed, allow_tensor=True, allow_operation=False)
    except Exception as e:
        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0]}") from None
    if not user_graph.is_feedable(tensor):
        raise ValueError(f"Tensor {tensor.name} may not be fed.")
    return FeedSlot(tensor, _feed_targets(program, tensor))


def _feed_targets(program: Program, tensor: Any) -> list[FeedTarget]:
    """(inner tensor name, numpy dtype, rounding dtype or None) for every inner tensor a value fed to `tensor`
    reaches.

    When the NPU holds the user tensor in a reduced dtype, its float32 original may still be read directly (the
    pass lets float32 readers of select/copy ops skip a Cast pair), so a value fed there is first rounded
    through the reduced dtype: every reader sees what the NPU would hold. Readers the pass moved to another
    tensor holding the same value are reached there too (see `_moved_readers`).
    """
    ref = program.result.tensor_map.get(tensor.name)
    names = [ref.name] if ref is not None else []
    if tensor.name not in names:
        names.append(tensor.name)
    rounding = np.dtype(tf.as_dtype(ref.dtype).as_numpy_dtype) if ref is not None else None
    targets: list[FeedTarget] = []
    for name in names:
        try:
            dtype = _numpy_dtype(program.ops, name)
        except KeyError:
            continue
        targets.append((name, dtype, rounding if rounding is not None and rounding != dtype else None))
    for inner in _moved_readers(program, tensor, {name for name, _, _ in targets}):
        dtype = _numpy_dtype(program.ops, inner)
        targets.append((inner, dtype, dtype))
    return targets


def _numpy_dtype(ops: InnerOps, name: str) -> np.dtype:
    return np.dtype(ops.dtype(name).base_dtype.as_numpy_dtype)


def _added_by_pass(ops: InnerOps, op_name: str) -> bool:
    """A Cast the pass added, or its saturation-mode clamp of a float16 output (both pass a value on)."""
    marker = ops.attr(op_name, MARKER)
    if marker is None:
        return False
    op_type = ops.op_type(op_name)
    return (op_type, marker.s) == ("Cast", MARK_CAST) or marker.s == MARK_SATURATION and op_type in CLAMP_OPS


def _moved_readers(program: Program, tensor: Any, reached: set[str]) -> list[str]:
    """Inner tensors that must also take a value fed to user tensor `tensor`.

    The pass may let a reader skip a user's widening Cast and read the reduced tensor before it (the same values),
    or read a user's Cast of another tensor instead of adding its own. A value fed to a tensor must reach every one
    of its readers, and no op that read neither it nor Casts of it: the tensor a reader skipped to is fed too when
    no other op reads it in the inner graph; otherwise the feed cannot be placed, and this says so rather than
    returning a wrong result.
    """
    user_graph, ops = tensor.graph, program.ops
    moved: list[str] = []
    for reader in tensor.consumers():
        if reader.name not in ops:
            continue
        inner_inputs = ops.inputs(reader.name)
        for index, source in enumerate(reader.inputs):
            if source is not tensor:
                continue
            inner = inner_inputs[index]
            if _reads_through_casts(ops, inner, reached):
                continue        # the reader still takes the fed value (through Casts, possibly the user's own)
            while _added_by_pass(ops, producer(inner)):
                inner = ops.inputs(producer(inner))[0]
            if inner not in moved:
                moved.append(inner)
    for inner in [*reached, *moved]:
        for reader in _inner_readers(ops, inner):
            if reader == tensor.op.name:
                continue        # the op computing the fed tensor: its output is replaced anyway
            try:
                user_reader = user_graph.get_operation_by_name(reader)
            except KeyError:
                continue        # an op the user's graph does not have
            if not any(_derived_by_casts(source, tensor) for source in user_reader.inputs):
                raise _unplaceable_feed(tensor, reader, inner, inner in moved)
    return moved


def _derived_by_casts(source: Any, tensor: Any) -> bool:
    """Is user tensor `source` the user tensor `tensor`, or a chain of Casts of it?"""
    while source is not tensor and source.op.type == "Cast":
        source = source.op.inputs[0]
    return source is tensor


def _reads_through_casts(ops: InnerOps, inner: str, reached: set[str]) -> bool:
    """Does inner tensor `inner` hold a value read from one of `reached` through Casts (the user's or the pass's)?"""
    while inner not in reached:
        op = producer(inner)
        if ops.op_type(op) != "Cast" and not _added_by_pass(ops, op):
            return False
        inner = ops.inputs(op)[0]
    return True


def _inner_readers(ops: InnerOps, name: str) -> Iterator[str]:
    """Names of the ops reading tensor `name` in the inner graph, seen through the Casts the pass added."""
    for op in ops.readers(name):
        if _added_by_pass(ops, op):
            yield from _inner_readers(ops, op + ":0")
        else:
            yield op


def _unplaceable_feed(tensor: Any, reader: str, inner: str, moved: bool) -> errors.InvalidArgumentError:
    inner = user_errors.user_name(inner)
    if moved:
        how = f"wired the readers of '{tensor.name}' to '{inner}' (the same values), which op '{reader}' reads too"
    else:
        how = f"made op '{reader}' read '{inner}' instead of adding a Cast of its own"
    return errors.InvalidArgumentError(
        None, None,
        f"NpuOptimizer emulation cannot feed '{tensor.name}': to save Casts the precision pass {how}, and "
        f"'{reader}' does not read '{tensor.name}' in your graph, so a value fed there would reach it. Feed a tensor "
        "before or after it, or run with precision_mode 'must_keep_origin_dtype'.")


def _connection(program: Program, user_graph: Any, source: Any, destination: Any) -> list[tuple[str, str]]:
    """Inner (from, to) tensor names feeding user tensor `destination` from user tensor `source`."""
    source = user_graph.as_graph_element(source, allow_tensor=True, allow_operation=False)
    destination = user_graph.as_graph_element(destination, allow_tensor=True, allow_operation=False)
    ref = program.result.tensor_map.get(source.name)
    inner_source = ref.name if ref is not None else source.name
    return [(program.fetch_name(inner_source, tf.as_dtype(dtype)), target)
            for target, dtype, _ in _feed_targets(program, destination)]


def _feed_landing(slots: Sequence[FeedSlot]) -> dict[str, Any]:
    """{inner tensor name: user tensor fed there}; two fed tensors landing on one inner tensor are refused."""
    landing: dict[str, Any] = {}
    for slot in slots:
        for inner, _, _ in slot.targets:
            other = landing.setdefault(inner, slot.user_tensor)
            if other is not slot.user_tensor:
                raise _cannot_together(f"feed both '{other.name}' and '{slot.user_tensor.name}'", inner)
    return landing


def _check_fetch_not_fed(program: Program, fetch: Any, inner_fetch: str, landing: Mapping[str, Any]) -> None:
    """Refuse a fetch whose value lives in an inner tensor that a feed of another user tensor replaces: TensorFlow
    would refuse the inner tensor being both fed and fetched, or the fetch would return the other tensor's value."""
    ref = program.result.tensor_map.get(fetch.name)
    for inner in {inner_fetch, ref.name if ref is not None else fetch.name}:
        fed = landing.get(inner)
        if fed is not None and fed is not fetch and (inner == inner_fetch or not _derived_by_casts(fetch, fed)):
            raise _cannot_together(f"feed '{fed.name}' and fetch '{fetch.name}'", inner)


def _cannot_together(what: str, inner: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(
        None, None,
        f"NpuOptimizer emulation cannot {what} in one run: the precision pass keeps both values in one tensor "
        f"('{inner}'), as the NPU holds them reduced. Leave one out, or run with precision_mode "
        "'must_keep_origin_dtype'.")


def _fetch_source(program: Program, user_tensor: Any, landing: Mapping[str, Any]) -> tuple[str, np.dtype | None]:
    """(inner tensor to fetch, numpy dtype to widen its value to on the host or None) for a fetched user tensor.

    A float32 value the NPU holds in float16 or bfloat16 is fetched as held and widened by NumPy, which gives a
    Cast's exact values. A Cast made in the inner graph once the session has a callable makes TensorFlow extend
    the session, and that converts and places the whole graph again (about 0.1 s per 4,000 nodes). The Cast is
    made when the held tensor is fed in the same run (TensorFlow cannot fetch a fed tensor) or the conversion
    would round.
    """
    ref = program.result.tensor_map.get(user_tensor.name)
    name = ref.name if ref is not None else user_tensor.name
    held, wanted = program.ops.dtype(name).base_dtype, user_tensor.dtype.base_dtype
    if held in _REDUCED and wanted in _WIDER and name not in landing:
        return name, np.dtype(wanted.as_numpy_dtype)
    return program.fetch_name(name, wanted), None


_REDUCED = (tf.float16, tf.bfloat16)
_WIDER = (tf.float32, tf.float64)


def _assert_fetchable(graph: Any, op: Any) -> None:
    if not graph.is_fetchable(op):
        raise errors.InaccessibleTensorError(
            f"Operation {op.name} has been marked as not fetchable. Typically this happens when it is "
            "defined in another function or code block. Use return values, explicit Python locals or TensorFlow "
            "collections to access it.")


_FORWARDING_OPS = frozenset({"Identity", "Snapshot", "StopGradient", "Reshape", "Squeeze", "ExpandDims",
                             "IdentityN"})
_VARIABLE_VALUE_OPS = VARIABLE_OPS | {"ReadVariableOp"}    # a variable, or a read of a resource variable


def _may_share_variable_buffer(ops: InnerOps, name: str) -> bool:
    """Is inner tensor `name` a variable's value, possibly through ops that pass their input's buffer on?"""
    for _ in range(64):
        op_type = ops.op_type(producer(name))
        if ops.is_ref(name) or op_type in _VARIABLE_VALUE_OPS:
            return True
        inputs = ops.inputs(producer(name)) if op_type in _FORWARDING_OPS else ()
        if not inputs:
            return False
        name = inputs[0]
    return True


def _iterations(op: Any, configured: int) -> int:
    try:
        requested = op.get_attr(ITERATIONS_PER_LOOP_ATTR)
    except ValueError:
        return 1
    if requested != configured:
        raise NpuConfigError(
            f"op '{op.name}' asks for iterations_per_loop={requested} (set_iteration_per_loop) but the session's "
            f"NpuOptimizer parameter_map['iterations_per_loop'] is {configured}; the NPU requires them to be equal.")
    return requested
