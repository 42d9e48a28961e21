"""Rewrite only what a script added to its graph since the last run, when that gives what a full rewrite gives.

A script that adds an op and runs it, again and again, would otherwise pay a rewrite of the whole graph per op.
The pass decides a node from its producers (gray ops follow them), from the user Casts beside it that it may reuse,
and for a few ops from their consumers (a Relu read by a ReluGrad is the fused ReluV2). New nodes can only read
old ones, so the part to rewrite is the new nodes, every node they depend on (data and control inputs, transitively)
and the user Casts reading any of those. That part is rewritten alone, and it is accepted only when every old node
it holds, every Cast it adds that the running graph already has and every tensor-map entry of an old tensor come
out exactly as the running graph has them. Otherwise the caller rewrites the whole graph: when an old node or the
function library changed, when the part's rewrite fails (the full one names the error in its context), and when a
new user Cast reads an old tensor (old readers of that tensor may take it instead of a Cast of their own).
The report's counts are combined; its rows, built only when read, come from a full rewrite, since which consumer's
row names a shared Cast depends on every consumer. tests/runtime/test_speed_paths.py compares the result with a
full rewrite on graphs grown in the ways that could differ.
"""
from types import MappingProxyType

from tensorflow.core.framework import graph_pb2

from npu_bridge.core.contract import SATURATION_SUFFIX
from npu_bridge.core.precision import rewrite
from npu_bridge.core.precision.report import Report, RewriteResult
from npu_bridge.runtime.inner_ops import producer

# Set by TensorFlow on an existing op when it becomes a control input of a new one; changes nothing it computes.
_MARKER_ATTRS = ("_has_manual_control_dependencies",)


def _same_node(old, new):
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


def _part_to_rewrite(graph_def, first_new):
    """Names of the new nodes (index >= first_new), their transitive inputs, and user Casts reading those."""
    nodes = {node.name: node for node in graph_def.node}
    part = set()
    stack = [node.name for node in graph_def.node[first_new:]]
    while stack:
        name = stack.pop()
        if name in part or name not in nodes:
            continue
        part.add(name)
        stack.extend(producer(source) for source in nodes[name].input)
    old_in_part = {name for name in part if name in nodes}
    for node in graph_def.node[:first_new]:
        if node.op == "Cast" and node.name not in part and node.input and \
                producer(node.input[0]) in old_in_part:
            part.add(node.name)
            stack.extend(producer(source) for source in node.input)
    while stack:                    # a user Cast's control inputs, should it have any
        name = stack.pop()
        if name in part or name not in nodes:
            continue
        part.add(name)
        stack.extend(producer(source) for source in nodes[name].input)
    return part


class RunningGraph:
    """What the incremental rewrite compares against: the user GraphDef and the result the program runs."""

    def __init__(self, user_def, result):
        self.user_def = user_def
        self.result = result
        self._rewritten = None

    @property
    def rewritten(self):
        if self._rewritten is None:
            self._rewritten = {node.name: node for node in self.result.graph_def.node}
        return self._rewritten


def rewrite_added(running, user_def, options, lists, customize, saturation):
    """The RewriteResult of `user_def` built from `running` plus a rewrite of the added part, or None when a full
    rewrite is needed to be sure of the decisions."""
    old_def = running.user_def
    count = len(old_def.node)
    if len(user_def.node) <= count or user_def.library != old_def.library or user_def.versions != old_def.versions:
        return None
    for old, new in zip(old_def.node, user_def.node):
        if not _same_node(old, new):
            return None
    new_names = {node.name for node in user_def.node[count:]}
    for node in user_def.node[count:]:
        if node.op == "Cast" and node.input and producer(node.input[0]) not in new_names:
            return None     # old readers of its input may now read this user Cast instead of a Cast of their own
    part = _part_to_rewrite(user_def, count)
    sub = graph_pb2.GraphDef()
    sub.versions.CopyFrom(user_def.versions)
    sub.library.CopyFrom(user_def.library)
    sub.node.extend(node for node in user_def.node if node.name in part)
    try:
        partial = rewrite(sub, options, lists=lists, customize=customize, log=False, saturation=saturation)
    except Exception:
        return None     # the full rewrite raises the error, with the whole graph as context
    rewritten = running.rewritten
    added = []
    for node in partial.graph_def.node:
        known = rewritten.get(node.name)
        if known is None:
            added.append(node)
        elif node.name in new_names or not _same_node(known, node):
            return None
    old_map = running.result.tensor_map
    for name, ref in partial.tensor_map.items():
        if producer(name) not in new_names and old_map.get(name) != ref:
            return None
    for name, ref in old_map.items():
        if producer(name) in part and producer(name) not in new_names and partial.tensor_map.get(name) != ref:
            return None
    graph_def = graph_pb2.GraphDef()
    graph_def.CopyFrom(running.result.graph_def)
    graph_def.node.extend(added)
    tensor_map = dict(old_map)
    tensor_map.update((name, ref) for name, ref in partial.tensor_map.items() if producer(name) in new_names)
    report = _merged_report(running.result.report, partial.report, new_names, added,
                            lambda: rewrite(user_def, options, lists=lists, customize=customize, log=False,
                                            saturation=saturation))
    return RewriteResult(graph_def, report, MappingProxyType(tensor_map))


def _merged_report(old, partial, new_names, added, full_rewrite):
    """The report of the grown graph: counts and warnings combined from the running graph's and the added part's.

    Its rows (built only when someone reads them) come from a full rewrite: which consumer's row names a Cast
    several consumers share depends on every consumer, not only on the added part.
    """
    def rows():
        report = full_rewrite().report
        return [(r.name, r.tf_type, r.ir_type, r.list, r.decision, r.reason, r.casts, r.emulated, r.origin)
                for r in report.records], report.followed

    n_reduced = old.n_reduced + sum(1 for r in partial.records
                                    if r.name in new_names and r.decision == old.reduced_dtype)
    warnings = tuple(dict.fromkeys((*old.warnings, *partial.warnings)))
    added_by_pass = [node for node in added if node.name not in new_names]
    n_casts = sum(1 for node in added_by_pass if node.op == "Cast")
    n_clamped = sum(1 for node in added_by_pass if node.name.endswith(SATURATION_SUFFIX))
    return Report(old.mode_name, old.soc, old.reduced_dtype, rows, old.n_ops + len(new_names), n_reduced,
                  old.n_casts + n_casts, warnings, overflow_mode=old.overflow_mode,
                  n_clamped=old.n_clamped + n_clamped)
