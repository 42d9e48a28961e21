"""rewrite_increment(): the pass over what a graph gained since it was rewritten, giving what a full rewrite gives.

A script that adds an op and runs it, again and again, would otherwise pay a rewrite of the whole graph per op.
The pass decides a node from its producers (gray ops follow them), from the user Casts beside it that it may reuse,
and for a few ops from their consumers (a Relu read by a ReluGrad is the fused ReluV2). New nodes can only read
old ones, so the part to rewrite is the new nodes, every node they depend on (data and control inputs, transitively)
and the user Casts reading any of those. That part is rewritten alone, and the result is accepted only when every
old node it holds, every Cast it adds that the rewritten graph already has and every tensor-map entry of an old
tensor come out exactly as the rewritten graph has them. Otherwise (None) the caller rewrites the whole graph:
when an old node or the function library changed, when the part's rewrite fails (the full one names the error
with the whole graph as context), when a new user Cast reads an old tensor (old readers of that tensor may take it
instead of a Cast of their own), when the part calls functions (the full report's one warning about function
bodies counts every call) and when a customize_dtypes line names a new op (it no longer names a missing op).

The new ops' report records are the full rewrite's: a full rewrite walks the old ops first, so a Cast the
rewritten graph already has was caused by an old op, and so was the note about a constant it rounds away; the new
ops keep only the Casts and notes that are new. Old ops' records are unchanged, since their nodes are.
tests/core/test_incremental.py and tests/runtime/test_speed_paths.py compare with full rewrites.
"""
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from tensorflow.core.framework import graph_pb2

from npu_bridge.core.contract import SATURATION_SUFFIX
from npu_bridge.core.errors import PrecisionPassError
from npu_bridge.core.precision.report import Growth, OpRecord, Report, RewriteResult
from npu_bridge.core.precision.rewrite import function_bodies, op_record, pass_inputs, run_pass

if TYPE_CHECKING:
    from npu_bridge.core.customize_dtypes import CustomizeDtypes
    from npu_bridge.core.mixlist import PrecisionLists
    from npu_bridge.core.options import NpuOptions

# Set by TensorFlow on an existing op when it becomes a control input of a new one; changes nothing it computes.
_MARKER_ATTRS = ("_has_manual_control_dependencies",)


class Rewritten:
    """A user GraphDef and the RewriteResult of it: the state an increment is rewritten against."""

    def __init__(self, user_def: graph_pb2.GraphDef, result: RewriteResult) -> None:
        self.user_def = user_def
        self.result = result
        self._nodes: dict | None = None
        self._paired: frozenset | None = None

    @property
    def nodes(self) -> dict:
        """The rewritten graph's NodeDefs by name (built on first use)."""
        if self._nodes is None:
            self._nodes = {node.name: node for node in self.result.graph_def.node}
        return self._nodes

    @property
    def paired_relus(self) -> frozenset:
        """The names the user graph's ReluGrads read as features (see _paired_relus)."""
        if self._paired is None:
            self._paired = _paired_relus(self.user_def.node)
        return self._paired


class Increment(NamedTuple):
    """What rewrite_increment gives: the grown graph's RewriteResult and what it adds to the rewritten one."""

    result: RewriteResult       # node for node, tensor-map entry and report record what a full rewrite gives
    added: tuple                # NodeDefs beyond the rewritten graph's: the new user ops and the pass's new nodes
    records: tuple              # the new user ops' OpRecords, in graph order


def rewrite_increment(rewritten: Rewritten, user_def: graph_pb2.GraphDef, options: "NpuOptions", *,
                      lists: "PrecisionLists | None" = None, customize: "CustomizeDtypes | None" = None,
                      saturation: bool | None = None) -> Increment | None:
    """`user_def` (the graph of `rewritten` with nodes appended) rewritten from `rewritten` plus a rewrite of the
    added part, or None when only a full rewrite is sure to give the same decisions (see the module docstring).

    `lists`, `customize` and `saturation` are rewrite()'s and must be the ones `rewritten` was made with.
    """
    lists, customize, saturation = pass_inputs(options, lists, customize, saturation)
    old_def = rewritten.user_def
    count = len(old_def.node)
    if len(user_def.node) <= count or user_def.library != old_def.library or user_def.versions != old_def.versions:
        return None
    for old, new in zip(old_def.node, user_def.node):
        if not _same_node(old, new):
            return None
    new_names = {node.name for node in user_def.node[count:]}
    for node in user_def.node[count:]:
        if node.op == "Cast" and node.input and _producer(node.input[0]) not in new_names:
            return None
    if customize is not None and not new_names.isdisjoint(customize.by_name):
        return None
    part = _part_to_rewrite(user_def, count)
    sub = graph_pb2.GraphDef()
    sub.versions.CopyFrom(user_def.versions)
    sub.library.CopyFrom(user_def.library)
    sub.node.extend(node for node in user_def.node if node.name in part)
    changed = _paired_relus(user_def.node[count:]) - rewritten.paired_relus    # old Relus now the engine's ReluV2
    paired = rewritten.paired_relus | changed
    try:
        done = run_pass(sub, options, lists, customize, saturation, paired)
    except PrecisionPassError:
        return None
    if function_bodies(done):
        return None
    known = rewritten.nodes
    added = []
    for node in done.graph_def.node:
        old = known.get(node.name)
        if old is None:
            added.append(node)
        elif node.name in new_names or not _same_node(old, node):
            return None
    old_map = rewritten.result.tensor_map
    for name, ref in done.tensor_map.items():
        if _producer(name) not in new_names and old_map.get(name) != ref:
            return None
    for name, ref in old_map.items():
        if _producer(name) in part and _producer(name) not in new_names and done.tensor_map.get(name) != ref:
            return None
    tensor_map = dict(old_map)
    tensor_map.update((name, ref) for name, ref in done.tensor_map.items() if _producer(name) in new_names)
    graph_def = graph_pb2.GraphDef()
    graph_def.CopyFrom(rewritten.result.graph_def)
    graph_def.node.extend(added)
    records, report = _grown_report(rewritten.result.report, done, known, new_names, changed, added)
    return Increment(RewriteResult(graph_def, report, MappingProxyType(tensor_map)), tuple(added), records)


def _grown_report(old: Report, done, known, new_names, changed, added) -> tuple[tuple[OpRecord, ...], Report]:
    """The new ops' records and the grown graph's Report: the old one's rows and counts plus the new ops', with
    the rows of the old ops in `changed` (whose op facts depend on a new consumer) decided again.

    A new op keeps the Casts it caused in the part's rewrite that the rewritten graph lacks; a changed old op keeps
    the Casts its old record names (the full rewrite walks the same old ops before it).
    """
    builder, plans = done.builder, done.plans
    notes = builder.notes()

    def record(node, casts):
        kept = set(casts)
        return op_record(node.name, node.op, plans[node.name], done.facts, casts,
                         [note for cast, note in notes.get(node.name, ()) if cast in kept])

    records, replaced = [], {}
    for node in builder.originals:
        if node.name in new_names:
            records.append(record(node, [c for c in builder.caused.get(node.name, ()) if c not in known]))
        elif node.name in changed and node.op == "Relu":
            replaced[node.name] = record(node, old.by_name(node.name).casts)
    followed = {r.name: plans[r.name].followed for r in (*records, *replaced.values()) if plans[r.name].followed}
    reduced = old.reduced_dtype
    n_reduced = old.n_reduced + sum(1 for r in records if r.decision == reduced) + \
        sum((r.decision == reduced) - (old.by_name(r.name).decision == reduced) for r in replaced.values())
    new_casts = [name for name in builder.created if name not in known]
    warnings = tuple(dict.fromkeys((*old.warnings, *done.warnings,
                                    *(warning for cast, _, _, warning in builder.findings if cast not in known))))
    n_clamped = sum(1 for node in added if node.name.endswith(SATURATION_SUFFIX))

    report = Report(old.mode_name, old.soc, reduced, None, old.n_ops + len(new_names), n_reduced,
                    old.n_casts + len(new_casts), warnings, overflow_mode=old.overflow_mode,
                    n_clamped=old.n_clamped + n_clamped, growth=Growth(old, tuple(records), replaced, followed))
    return tuple(records), report


def _paired_relus(nodes) -> frozenset:
    """Names of the nodes a ReluGrad among `nodes` (NodeDefs) reads as its features (its second data input)."""
    found = set()
    for node in nodes:
        if node.op == "ReluGrad":
            data = [source for source in node.input if not source.startswith("^")]
            if len(data) == 2:
                found.add(_producer(data[1]))
    return frozenset(found)


def _producer(name: str) -> str:
    """The node of a tensor name or NodeDef input: "op:index", "op" or "^op"."""
    return name.lstrip("^").split(":", 1)[0]


def _same_node(old, new) -> bool:
    if old == new:
        return True
    if old.name != new.name:
        return False
    old_copy, new_copy = type(old)(), type(new)()
    old_copy.CopyFrom(old)
    new_copy.CopyFrom(new)
    for node in (old_copy, new_copy):
        for name in _MARKER_ATTRS:
            if name in node.attr:
                del node.attr[name]
    return old_copy == new_copy


def _part_to_rewrite(graph_def, first_new: int) -> set:
    """Names of the new nodes (index >= first_new), their transitive inputs, and user Casts reading those."""
    nodes = {node.name: node for node in graph_def.node}
    part: set = set()
    stack = [node.name for node in graph_def.node[first_new:]]
    _close_over_inputs(part, stack, nodes)
    read = set(part)
    for node in graph_def.node[:first_new]:
        if node.op == "Cast" and node.name not in part and node.input and _producer(node.input[0]) in read:
            part.add(node.name)
            stack.extend(_producer(source) for source in node.input)
    _close_over_inputs(part, stack, nodes)      # a user Cast's control inputs, should it have any
    return part


def _close_over_inputs(part: set, stack: list, nodes: dict) -> None:
    while stack:
        name = stack.pop()
        if name in part or name not in nodes:
            continue
        part.add(name)
        stack.extend(_producer(source) for source in nodes[name].input)
