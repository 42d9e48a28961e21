"""Overflow flags out of v1 control flow: where a tensor lives (loop body, cond branch) and how its flag leaves.

A float16 clamp inside a v1 while-loop body (Enter/Merge/Switch/NextIteration/Exit frames) or a v1 cond branch
(Switch/Merge) computes its overflow flag inside that context: the flag exists once per iteration, or is a dead
tensor when its branch is not taken, and cannot be read from outside. The device status register is global, so
here each flag is carried out the way TensorFlow carries values out of its own contexts:

- out of a cond branch: a Merge of the branch's flag and a False computed in the other branch (the predicate
  switched on itself gives False in the false branch; its negation, in the true branch);
- out of a loop: a loop-carried "any overflow so far" bool (Enter of False, Merge with its NextIteration,
  Switch on the loop's LoopCond, OR'ed with the body's flag each iteration), whose Exit is the flag outside.

A context is a tuple from the root: ("loop", frame name) and ("branch", predicate tensor, port) entries.
"""
from tensorflow.core.framework import attr_value_pb2, types_pb2
from tensorflow.python.framework import tensor_util

from npu_bridge.core.contract import MARK_SATURATION, MARKER, NAME_SUFFIX
from npu_bridge.core.graph import Tensor, encode_attrs

ROOT = ()
_NEXT_ITERATION = frozenset({"NextIteration", "RefNextIteration"})
_ENTER = frozenset({"Enter", "RefEnter"})
_EXIT = frozenset({"Exit", "RefExit"})
_MERGE = frozenset({"Merge", "RefMerge"})
_SWITCH = frozenset({"Switch", "RefSwitch"})


class Contexts:
    """The control-flow context of every tensor of a graph, and the loop attributes flags need to leave."""

    def __init__(self, graph):
        self.graph = graph
        self._of_node, self._of_switch = {}, {}
        self.loop_cond, self.loop_attrs = {}, {}
        for node in _acyclic_order(graph):
            self._of_node[node.name] = context = self._infer(node)
            if node.op == "LoopCond":
                self.loop_cond[context] = Tensor(node.name, 0)
            elif node.op in _ENTER:
                self.loop_attrs[context] = node.node_def.attr["parallel_iterations"].i

    def of(self, tensor):
        """The context `tensor` lives in (a Switch's two outputs live in different branches)."""
        switched = self._of_switch.get(tensor.node)
        if switched is not None:
            return switched[tensor.port] if tensor.port < 2 else switched[1]
        return self._of_node.get(tensor.node, ROOT)

    def _source(self, name):
        switched = self._of_switch.get(name)
        return switched[2] if switched is not None else self._of_node.get(name, ROOT)

    def _infer(self, node):
        data = [self.of(t) for t in node.inputs if not t.node.startswith("^")]
        deepest = max(data + [self._source(n) for n in node.control_inputs], key=len, default=ROOT)
        if node.op in _ENTER:
            return data[0] + (("loop", node.node_def.attr["frame_name"].s.decode()),)
        if node.op in _EXIT:
            inner = data[0]
            while inner and inner[-1][0] != "loop":
                inner = inner[:-1]
            return inner[:-1]
        if node.op in _MERGE:
            sources = (self.graph.nodes.get(t.node) for t in node.inputs)
            if any(source is not None and source.op in _NEXT_ITERATION for source in sources):
                return data[0]
            return deepest[:-1] if deepest and deepest[-1][0] == "branch" else deepest
        if node.op in _SWITCH:
            predicate = node.inputs[1]
            producer = self.graph.nodes.get(predicate.node)
            if producer is not None and producer.op == "LoopCond":
                self._of_switch[node.name] = (deepest, deepest, deepest)
            else:
                self._of_switch[node.name] = tuple(deepest + (("branch", predicate, port),) for port in (0, 1)) + (deepest,)
        return deepest


def _acyclic_order(graph):
    """The nodes in an order where each comes after its inputs, NextIteration back edges left out."""
    names = {node.name for node in graph.order}
    waiting, readers, ready = {}, {}, []
    for node in graph.order:
        sources = {t.node for t in node.inputs if t.node in names}
        if node.op in _MERGE:
            sources = {s for s in sources if graph.nodes[s].op not in _NEXT_ITERATION}
        sources |= {n for n in node.control_inputs if n in names}
        waiting[node.name] = len(sources)
        for source in sources:
            readers.setdefault(source, []).append(node)
        if not sources:
            ready.append(node)
    while ready:
        node = ready.pop()
        yield node
        for reader in readers.get(node.name, ()):
            waiting[reader.name] -= 1
            if not waiting[reader.name]:
                ready.append(reader)


def _attrs(**values):
    values[MARKER] = attr_value_pb2.AttrValue(s=MARK_SATURATION)
    return encode_attrs(values)


_BOOL = attr_value_pb2.AttrValue(type=types_pb2.DT_BOOL)
_FALSE = _attrs(dtype=_BOOL, value=attr_value_pb2.AttrValue(tensor=tensor_util.make_tensor_proto(False)))


class FlagLifter:
    """Builds (into `new_nodes`) the nodes that carry bool flags out of their contexts to the root."""

    def __init__(self, graph, contexts, new_nodes):
        self.graph, self.contexts, self.new_nodes = graph, contexts, new_nodes

    def to_root(self, flags):
        """flags: (bool tensor, its context) pairs. Root-level bools, one per context that held flags: true
        when any of them was true in this run."""
        grouped = {}
        for flag, context in flags:
            grouped.setdefault(context, []).append(flag)
        while any(grouped):
            context = max(grouped, key=len)
            combined = self._any(grouped.pop(context))
            grouped.setdefault(context[:-1], []).append(self._leave(context, combined))
        return grouped.get(ROOT, [])

    def _add(self, base, op, inputs, attrs):
        name = self.graph.reserve_name(f"{base}{NAME_SUFFIX}")
        self.new_nodes.append((name, op, tuple(inputs), "", attrs))
        return Tensor(name, 0)

    def _any(self, flags):
        result = flags[0]
        for flag in flags[1:]:
            result = self._add(f"{flag.node}-AnyFlag", "LogicalOr", (result, flag), _attrs())
        return result

    def _false_in(self, context, base):
        """A False computed in `context` (alive exactly when the context runs)."""
        if context == ROOT:
            return self._add(f"{base}-False", "Const", (), _FALSE)
        kind, *key = context[-1]
        predicate, port = (self.contexts.loop_cond[context], 1) if kind == "loop" else (key[0], key[1])
        switch = self._add(f"{base}-Pivot", "Switch", (predicate, predicate), _attrs(T=_BOOL))
        value = self._add(f"{base}-PivotValue", "Identity", (Tensor(switch.node, port),), _attrs(T=_BOOL))
        return value if port == 0 else self._add(f"{base}-NotPivot", "LogicalNot", (value,), _attrs())

    def _leave(self, context, flag):
        kind, *key = context[-1]
        base = f"{flag.node}-Leave"
        if kind == "branch":
            other = context[:-1] + (("branch", key[0], 1 - key[1]),)
            return self._add(base, "Merge", (flag, self._false_in(other, base)), _attrs(T=_BOOL, N=_int(2)))
        start = self._false_in(context[:-1], base)
        enter = self._add(f"{base}-Enter", "Enter", (start,), _attrs(
            T=_BOOL, frame_name=attr_value_pb2.AttrValue(s=key[0].encode()),
            is_constant=attr_value_pb2.AttrValue(b=False),
            parallel_iterations=_int(self.contexts.loop_attrs.get(context, 10))))
        next_name = self.graph.reserve_name(f"{base}-NextIteration{NAME_SUFFIX}")
        merge = self._add(f"{base}-Merge", "Merge", (enter, Tensor(next_name, 0)), _attrs(T=_BOOL, N=_int(2)))
        switch = self._add(f"{base}-Switch", "Switch", (merge, self.contexts.loop_cond[context]), _attrs(T=_BOOL))
        so_far = self._add(f"{base}-SoFar", "Identity", (Tensor(switch.node, 1),), _attrs(T=_BOOL))
        updated = self._add(f"{base}-Or", "LogicalOr", (so_far, flag), _attrs())
        self.new_nodes.append((next_name, "NextIteration", (updated,), "", _attrs(T=_BOOL)))
        return self._add(f"{base}-Exit", "Exit", (Tensor(switch.node, 0),), _attrs(T=_BOOL))


def _int(value):
    return attr_value_pb2.AttrValue(i=value)
