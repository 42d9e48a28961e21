"""Decide, node by node in topological order, the dtype each float type attribute computes in.

A NodePlan holds the outcome for one node: the physical attribute changes (what its kernel will run in) and,
per port, the logical dtype (what the NPU would read or produce there). The two differ when the op computes in
float32 between Casts: its kernel stays float32 while its inputs are rounded through the reduced type and its
outputs are rounded to it. casts.py turns plans into Casts.

Gray ops follow their producers, so decisions flow forward. v1 while loops have back edges
(NextIteration -> Merge); those edges are skipped on the way forward, then every loop's Merge/NextIteration
pair is checked: if they disagree, both are pinned to float32 and the decisions are redone, until stable.
"""
from npu_bridge.core.contract import (
    MARK_EMULATED, MARK_RETYPED, MARKER, MARKER_OUT, MIXED_MODES, REF_VARIABLE_OPS, PrecisionMode,
)
from npu_bridge.core.precision.rules import (
    FOLLOWED, FP32, NEUTRAL, REDUCED, RuleViolation, SlotDecision, deciding_producer, slot_rule, why_between_casts,
)
from npu_bridge.core.precision.typeattrs import (
    DT_FLOAT, DTYPES_BY_NAME, FLOAT_DTYPES, REDUCED_DTYPES, dtype_name, has_cpu_kernel,
)
from npu_bridge.core.tf_to_ir import HCCL_IR_TYPES

SOURCE_OPS = frozenset({"Const", "HostConst", "Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "_Arg"})
# A ref variable (contract.REF_VARIABLE_OPS) is read through an Identity (`w/read`); it is the variable's float32
# master value, as the ReadVariableOp of a resource variable is, so it is a graph source too and is never retyped.
STATE_PREFIXES = ("Assign", "Apply", "ResourceApply", "SparseApply", "ResourceSparseApply", "Scatter",
                  "ResourceScatter")
LOOK_THROUGH_OPS = frozenset({"Identity", "Cast"})

# The plan markers the pass writes on the node as its contract.MARKER value; the others ("none", "source",
# "state", "call", "rewritten") only steer the pass.
RETYPED = MARK_RETYPED.decode()
EMULATED = MARK_EMULATED.decode()
WRITTEN_MARKERS = frozenset({RETYPED, EMULATED})


class NodePlan:
    """The pass's decision for one node."""

    __slots__ = ("changes", "in_logical", "out_logical", "decision", "reason", "emulated", "list_name",
                 "ir_type", "marker", "followed")

    def __init__(self, decision, reason, list_name="-", ir_type=""):
        self.changes = {}          # Slot -> new physical dtype
        self.in_logical = None     # per input port: logical dtype, or None when it equals the physical one
        self.out_logical = None
        self.decision = decision
        self.reason = reason
        self.emulated = False
        self.list_name = list_name
        self.ir_type = ir_type
        self.marker = ""
        self.followed = ""         # the producer whose dtype a gray op followed (FOLLOWED in `reason`)

    def following(self, producer):
        """This plan for another gray op, one that follows `producer` (plans are shared, never modified)."""
        plan = NodePlan(self.decision, self.reason, self.list_name, self.ir_type)
        plan.changes, plan.in_logical, plan.out_logical = self.changes, self.in_logical, self.out_logical
        plan.emulated, plan.marker, plan.followed = self.emulated, self.marker, producer
        return plan

    def noting(self, note):
        """This plan with `note` appended to its reason, for one node (plans are shared, never modified)."""
        plan = self.following(self.followed)
        plan.reason = self.reason + note
        return plan


class GraphStructureError(ValueError):
    def __init__(self, node, detail):
        self.node = node
        super().__init__(detail)


# What the graph engine's constant folding (GE Prepare, before the Fusion Engine decides dtypes) starts from:
# constants, and the shape of any tensor, static when the NPU compiles the graph for the shapes of its first run.
FOLDING_ROOTS = frozenset({"Const", "HostConst", "Shape", "ShapeN", "Size", "Rank"})
_CONTROL_FLOW_OPS = frozenset({"Enter", "RefEnter", "Exit", "RefExit", "Merge", "RefMerge", "Switch", "RefSwitch",
                               "NextIteration", "RefNextIteration", "LoopCond"})


def _constant_folded(order, signatures):
    """Names of the nodes, other than constants, that constant folding replaces: every data input is a folding
    root or folded itself, and the node has no state, variant or function call (a zeros Fill of a static shape,
    the arithmetic of a learning-rate constant). Nodes are in topological order, so one pass suffices."""
    constant, folded = set(), set()
    for node in order:
        op = node.op
        if op in FOLDING_ROOTS:
            constant.add(node.name)
            if op not in SOURCE_OPS:
                folded.add(node.name)
            continue
        if not node.inputs:
            continue
        for source in node.inputs:      # most nodes fail at their first input: checked before anything else
            if source.node not in constant:
                break
        else:
            sig = signatures[node.name]
            if op not in _CONTROL_FLOW_OPS and not (sig.has_state or sig.is_call or sig.has_variant):
                constant.add(node.name)
                folded.add(node.name)
    return folded


def topological_order(graph):
    """Nodes with the producer of every data input first, NextIteration -> Merge back edges ignored.

    Control edges do not order decisions (a gray op follows the dtypes it reads, not what runs before it), so
    they are not read at all. GraphDefs written by TensorFlow are almost always in creation order, which is
    already topological: check that in one pass and sort (Kahn's algorithm) only when it is not.
    """
    if len(graph.nodes) != len(graph.order):
        names = set()
        duplicate = next(n.name for n in graph.order if n.name in names or names.add(n.name))
        raise GraphStructureError(duplicate, "two nodes have this name; TensorFlow requires unique node names")
    seen = set()
    for node in graph.order:
        for source in node.inputs:
            if source.node not in seen and not _back_edge(graph, node, source.node):
                return _kahn(graph)
        seen.add(node.name)
    return list(graph.order)


def _back_edge(graph, node, source_name):
    if node.op not in ("Merge", "RefMerge"):
        return False
    source = graph.nodes.get(source_name)
    return source is not None and source.op in ("NextIteration", "RefNextIteration")


def _kahn(graph):
    pending = {}
    fanout = {}
    for node in graph.order:
        count = 0
        for source in node.inputs:
            if source.node not in graph.nodes:
                raise GraphStructureError(node.name, f"input '{source.as_input()}' names no node of the graph")
            if _back_edge(graph, node, source.node):
                continue
            fanout.setdefault(source.node, []).append(node)
            count += 1
        pending[node.name] = count
    ready = [n for n in graph.order if pending[n.name] == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for consumer in fanout.get(node.name, ()):
            pending[consumer.name] -= 1
            if pending[consumer.name] == 0:
                ready.append(consumer)
    if len(order) != len(graph.order):
        stuck = next(n for n in graph.order if pending[n.name] > 0)
        raise GraphStructureError(stuck.name, "the graph has a cycle that is not a v1 while loop back edge "
                                              "(NextIteration -> Merge)")
    return order


class Decider:
    """Holds the per-graph caches; `run()` returns {node name: NodePlan}."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.graph = ctx.graph
        self.order = topological_order(ctx.graph)
        self.signatures = {n.name: ctx.signature(n) for n in self.order}
        self.folded = _constant_folded(self.order, self.signatures)
        self.facts = {}
        self._shared = {}       # (signature, facts, deciding producer classes) -> the plan those nodes share
        self.changed = []       # names of nodes whose plan changes attributes or logical dtypes
        self.warnings = {}      # sentence -> None: what a user should hear about (ordered, each once)

    def run(self):
        pinned = {}
        while True:
            plans, follow = {}, {}
            for node in self.order:
                self.ctx.current = node.name
                plan = plans[node.name] = self._plan(node, follow, pinned)
                if plan.marker not in NEUTRAL_MARKERS:
                    self._record_follow(node, plan, follow)
            mismatched = self._loop_mismatches(plans)
            new = {name: why for name, why in mismatched.items() if name not in pinned}
            if not new:
                self.changed = [n.name for n in self.order if plans[n.name].changes or plans[n.name].out_logical
                                or plans[n.name].in_logical]
                return plans
            pinned.update(new)

    # ---- follow classes ------------------------------------------------------------------------------
    def _record_follow(self, node, plan, follow):
        """Record the float32 and reduced outputs of `node`; every output not recorded is neutral to gray ops
        (non-float tensors, graph sources, state and function-call outputs), so most nodes record nothing."""
        marked_out = plan.out_logical
        changes = plan.changes
        for port_index, port in enumerate(self.signatures[node.name].outputs):
            if port.dtype in FLOAT_DTYPES:
                dtype = marked_out[port_index] if marked_out and marked_out[port_index] else \
                    changes.get(port.slot, port.dtype)
                follow[(node.name, port_index)] = REDUCED if dtype in REDUCED_DTYPES else FP32

    def _producer_class(self, tensor, follow):
        """Follow class and name of the op a gray op follows: looks through Identity and non-black Casts between
        float dtypes (FE's look-through). A Cast to or from an integer or bool is the producer itself: the values
        after it no longer carry the precision of the op before it."""
        nodes = self.graph.nodes
        while True:            # terminates: the graph passed the topological check, so no Identity/Cast cycle
            producer = nodes[tensor.node]
            if producer.op not in LOOK_THROUGH_OPS or not producer.inputs:
                break
            if producer.op == "Cast":
                attrs = producer.node_def.attr
                if attrs["DstT"].type not in FLOAT_DTYPES or attrs["SrcT"].type not in FLOAT_DTYPES or \
                        (MARKER not in attrs and self._facts(producer).list_name == "black"):
                    break
            tensor = producer.inputs[0]
        return follow.get((tensor.node, tensor.port), NEUTRAL), tensor.node

    # ---- per node ---------------------------------------------------------------------------------
    def _facts(self, node):
        facts = self.facts.get(node.name)
        if facts is None:
            facts = self.ctx.op_facts(node)
            self.facts[node.name] = facts
        return facts

    def _plan(self, node, follow, pinned):
        ctx = self.ctx
        sig = self.signatures[node.name]
        float_slots = sig.float_slots
        if not float_slots and not sig.is_call:
            return NO_FLOAT
        op = node.op
        if op in SOURCE_OPS or (op == "Identity" and self.graph.nodes[node.inputs[0].node].op in REF_VARIABLE_OPS):
            return SOURCE
        if node.name in self.folded:
            return FOLDED
        if ctx.host_ops and _flag(node.node_def.attr, "_without_npu_compile"):
            return HOST
        if sig.is_call:
            return CALL
        if op in HCCL_PLANS:
            return HCCL_PLANS[op]
        if sig.has_state or op.startswith(STATE_PREFIXES):
            return STATE
        if sig.has_variant:
            return CONTAINER
        attrs = node.node_def.attr
        if MARKER in attrs:         # checked after sources and state, which the pass never marks
            return self._already_rewritten(node, sig, attrs)
        facts = self._facts(node)
        if op == "Cast":
            return NodePlan("unchanged", "explicit Cast in the user graph: keeps its dtypes", facts.list_name,
                            facts.ir_type)
        if ctx.mode is PrecisionMode.KEEP_ORIGIN:
            return NodePlan("unchanged", f"{ctx.mode_name}: every dtype stays as written", facts.list_name,
                            facts.ir_type)
        if node.name in pinned:
            return NodePlan("float32", pinned[node.name], facts.list_name, facts.ir_type)
        # customize_dtypes has top priority: it wins over _keep_dtype as over every list (the engine filters the
        # kernel dtypes by it before any precision mode is applied).
        rule = ctx.customize_rule(node, facts)
        if rule is not None:
            return self._customized(node, sig, facts, NodePlan("unchanged", "", facts.list_name, facts.ir_type), rule)
        if _flag(attrs, "_keep_dtype"):
            return NodePlan(dtype_name(next(iter(float_slots.values()))), "_keep_dtype=1 (keep_dtype_scope / "
                            "keep_tensors_dtypes): keeps its graph dtype", facts.list_name, facts.ir_type)
        deciding = self._deciding(node, sig, facts, follow)
        # The outcome depends on the node only through its signature, its facts and the classes of the producers
        # that decide it: nodes that agree on those share one decision, and gray ops get it with their own
        # producer's name.
        key = (id(sig), id(facts), tuple((slot, cls) for slot, (cls, _) in deciding.items()))
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = self._decide(node, sig, facts, deciding)
        if not deciding:
            return shared
        names = {name for _, name in deciding.values()}
        if len(names) > 1:      # attributes following different producers: each reason spells its own name
            return self._decide(node, sig, facts, deciding, spell=True)
        return shared.following(names.pop())

    def _deciding(self, node, sig, facts, follow):
        """{slot: (class, name) of the producer it follows} for a gray op under a mixed mode; slots whose
        producers are all neutral are left out, and so is everything when the rule does not read producers."""
        if self.ctx.mode not in MIXED_MODES or facts.list_name in ("white", "black"):
            return {}
        found = {}
        float_slots = sig.float_slots
        for index, port in enumerate(sig.inputs):
            if port.slot in float_slots:
                found.setdefault(port.slot, []).append(self._producer_class(node.inputs[index], follow))
        deciding = {}
        for slot, producers in found.items():
            producer = deciding_producer(producers)
            if producer is not None:
                deciding[slot] = producer
        return deciding

    def _decide(self, node, sig, facts, deciding, spell=False):
        plan = NodePlan("unchanged", "", facts.list_name, facts.ir_type)
        float_slots = sig.float_slots
        decisions = {}
        for slot, dtype in float_slots.items():
            if slot in sig.float_only:
                decisions[slot] = SlotDecision(dtype, dtype, f"attribute {slot.attr} of {node.op} does not admit "
                                                             "float16 in its op definition (statistics and the like "
                                                             "stay float32)")
                continue
            decision = slot_rule(self.ctx.mode, facts, dtype, self.ctx.reduced, deciding.get(slot))
            if decision is not None:
                if spell and decision.followed:
                    decision = decision._replace(reason=decision.reason.replace(FOLLOWED, decision.followed))
                decisions[slot] = decision
        return self._implement(node, sig, facts, plan, float_slots, decisions)

    def _implement(self, node, sig, facts, plan, float_slots, decisions):
        changed = {s: d for s, d in decisions.items()
                   if (d.in_dtype, d.out_dtype) != (float_slots[s], float_slots[s])}
        plan.followed = next((d.followed for d in decisions.values() if d.followed), "")
        plan.reason = _join_reasons(decisions, float_slots) or \
            f"{self.ctx.mode_name}: its {dtype_name(next(iter(float_slots.values())))} attributes are not " \
            "changed by this mode"
        if not changed:
            plan.decision = dtype_name(next(iter(float_slots.values())))
            return plan
        targets = {s: d.in_dtype for s, d in changed.items()}
        raising = all(d.in_dtype == d.out_dtype == DT_FLOAT for d in changed.values())
        if raising or all(d.in_dtype == d.out_dtype for d in changed.values()):
            key = _kernel_key(sig, targets)
            if raising:
                if not has_cpu_kernel(node.op, key):
                    plan.decision = dtype_name(next(iter(float_slots.values())))
                    plan.reason += f"; but TensorFlow has no float32 CPU kernel for {node.op}, so it is left as is"
                    return plan
                return _retyped(plan, targets)
            why = why_between_casts(node.op, facts.cube, key)
            if why is None:
                return _retyped(plan, targets)
        else:
            why = "cube op" if facts.cube else \
                f"no single CPU kernel for {node.op} with different input and output dtypes"
        return self._emulated(node, sig, plan, float_slots, changed, why)

    def _emulated(self, node, sig, plan, float_slots, changed, why):
        physical = {s: DT_FLOAT for s in changed if float_slots[s] != DT_FLOAT}
        if physical and not has_cpu_kernel(node.op, _kernel_key(sig, physical)):
            plan.decision = dtype_name(next(iter(float_slots.values())))
            plan.reason += f"; but TensorFlow has no CPU kernel for {node.op} in float32 or the new dtype: left as is"
            return plan
        plan.changes = physical
        plan.in_logical = tuple(changed[p.slot].in_dtype if p.slot in changed else None for p in sig.inputs)
        plan.out_logical = tuple(changed[p.slot].out_dtype if p.slot in changed else None for p in sig.outputs)
        plan.emulated = True
        plan.marker = EMULATED
        first = next(iter(changed.values()))
        plan.decision = dtype_name(first.in_dtype)
        plan.reason += f"; computed in float32 between casts ({why})"
        return plan

    def _customized(self, node, sig, facts, plan, rule):
        """customize_dtypes: the rule sets port dtypes directly; unnamed ports keep their graph dtype."""
        _check_kernel_dtypes(node, facts, rule)
        count = _input_count_problem(node, sig, facts, rule)
        if count:
            self.warnings[f"customize_dtypes [{self.ctx.customize.path}] line {rule.line}: {count}"] = None
        wanted_in = _wanted(rule.inputs, sig.inputs)
        wanted_out = _wanted(rule.outputs, sig.outputs)
        plan.reason = (f"customize_dtypes line {rule.line} (by {rule.by}): inputs "
                       f"{_spell(rule.inputs)}, outputs {_spell(rule.outputs)}")
        ignored = _not_emulated("input", rule.inputs, wanted_in) + _not_emulated("output", rule.outputs, wanted_out)
        if ignored:
            plan.reason += (f" (not applied: {', '.join(ignored)}; the TF op has no such float port, or the dtype "
                            "is not one of float16/bfloat16/float32)")
        by_slot = {}
        for ports, wanted in ((sig.inputs, wanted_in), (sig.outputs, wanted_out)):
            for port, dtype in zip(ports, wanted):
                if port.slot is not None and port.dtype in FLOAT_DTYPES:
                    by_slot.setdefault(port.slot, set()).add(dtype or port.dtype)
        uniform = {s: d.pop() for s, d in by_slot.items() if len(d) == 1}
        targets = {s: d for s, d in uniform.items() if d != sig.slots[s]}
        if len(uniform) == len(by_slot):
            if not targets:
                plan.decision = dtype_name(next(iter(uniform.values())))
                return plan
            if why_between_casts(node.op, facts.cube, _kernel_key(sig, targets)) is None:
                return _retyped(plan, targets)
        plan.changes = {s: DT_FLOAT for s in by_slot if sig.slots[s] != DT_FLOAT}
        plan.in_logical = _keep_unnamed(wanted_in, sig.inputs)
        plan.out_logical = _keep_unnamed(wanted_out, sig.outputs)
        plan.emulated = True
        plan.marker = EMULATED
        reduced = [d for d in (*wanted_in, *wanted_out) if d in REDUCED_DTYPES]
        plan.decision = dtype_name(reduced[0]) if reduced else "float32"
        plan.reason += "; computed in float32 between casts"
        return plan

    def _already_rewritten(self, node, sig, attrs):
        marker = attrs[MARKER].s.decode()
        plan = NodePlan("unchanged", f"already rewritten by npu_bridge ({marker}): left as is")
        plan.marker = "rewritten"
        if MARKER_OUT in attrs:
            plan.out_logical = tuple(d if d != sig.outputs[i].dtype else None
                                     for i, d in enumerate(attrs[MARKER_OUT].list.type))
        return plan

    def _loop_mismatches(self, plans):
        """{name: reason} for Merge/NextIteration pairs whose dtypes across the back edge differ."""
        graph = self.graph
        found = {}
        for node in self.order:
            if node.op not in ("NextIteration", "RefNextIteration"):
                continue
            consumers = graph.consumers((node.name, 0))
            for consumer, _ in consumers:
                if consumer.op not in ("Merge", "RefMerge"):
                    raise GraphStructureError(node.name, f"NextIteration feeds '{consumer.name}' ({consumer.op}); "
                                                         "a v1 while loop back edge must feed a Merge")
            mine = _port_dtypes(plans[node.name], self.signatures[node.name], 0, output=True)
            for consumer, index in consumers:
                theirs = _port_dtypes(plans[consumer.name], self.signatures[consumer.name], index, output=False)
                if mine != theirs:
                    why = (f"loop back edge: Merge '{consumer.name}' and NextIteration '{node.name}' must carry "
                           "one dtype, so both keep float32")
                    found[node.name] = why
                    for merge, _ in consumers:
                        found[merge.name] = why
        return found


def _port_dtypes(plan, sig, index, output):
    port = (sig.outputs if output else sig.inputs)[index]
    physical = plan.changes.get(port.slot, port.dtype)
    logical_list = plan.out_logical if output else plan.in_logical
    logical = logical_list[index] if logical_list and logical_list[index] else physical
    return physical, logical


def _fixed(marker, reason):
    plan = NodePlan("unchanged", reason)
    plan.marker = marker
    return plan


# Outcomes shared by every node they apply to (plans are never modified once made).
NO_FLOAT = _fixed("none", "no float type attribute")
SOURCE = _fixed("source", "graph source: its outputs are neutral for gray ops")
FOLDED = _fixed("source", "computed from constants and tensor shapes only: the graph engine folds it into a "
                          "constant before precision is decided, so it is a graph source, neutral for gray ops")
HOST = _fixed("source", "without_npu_compile_scope under mix_compile_mode: runs in TensorFlow on the host, outside "
                        "the NPU graph, which reads its outputs as inputs (neutral for gray ops)")
CALL = _fixed("call", "function call: ports are fixed by the function signature; the function body is left intact")
STATE = _fixed("state", "stateful op or ref/resource ports (variables, updates, random, I/O): never retyped")
# Every op on one tensor list (or optional, or dataset) must agree on its element dtype, and the ops reading a list
# back often sit in function bodies the pass leaves intact (control flow v2: tf.map_fn, TensorArray), so no op
# with a variant handle is retyped: its float ports keep their dtype and Casts meet them there, as for state.
CONTAINER = _fixed("state", "tensor list, optional or dataset op (variant handle): the container fixes its element "
                            "dtype, so it is never retyped")
# HCCL collectives run in HCCL's kernel library, not the AI Core one the precision lists speak of: the precision
# mode never picks their dtype, they keep the one the graph gives them (a float16 all-reduce stays float16) and
# Casts meet them where a neighbour was retyped.
HCCL_PLANS = {}
for _tf_type, _ir_type in HCCL_IR_TYPES.items():
    HCCL_PLANS[_tf_type] = NodePlan("unchanged", "HCCL collective (HCCL kernel library, outside the AI Core lists): "
                                                 "keeps the dtype the graph gives it; Casts meet it", "-", _ir_type)
    HCCL_PLANS[_tf_type].marker = "state"
NEUTRAL_MARKERS = frozenset({"none", "source", "state", "call"})    # plans whose outputs gray ops never follow


def _retyped(plan, targets):
    plan.changes = dict(targets)
    plan.marker = RETYPED
    plan.decision = dtype_name(next(iter(targets.values())))
    return plan


def _flag(attrs, name):
    """An attribute the adapter's scopes set, as an int (keep_dtype_scope) or a bool (the other spellings)."""
    if name not in attrs:
        return False
    value = attrs[name]
    return bool(value.i or value.b)


def _kernel_key(sig, targets):
    """Sorted ((attr, dtype or tuple), ...) of every type attribute after applying `targets`."""
    single, lists = {}, {}
    for slot, dtype in sig.slots.items():
        dtype = targets.get(slot, dtype)
        if slot.index < 0:
            single[slot.attr] = dtype
        else:
            lists.setdefault(slot.attr, {})[slot.index] = dtype
    for attr, elements in lists.items():
        single[attr] = tuple(elements[i] for i in sorted(elements))
    return tuple(sorted(single.items()))


def _join_reasons(decisions, float_slots):
    if len(decisions) == 1 and len(float_slots) == 1:
        return next(iter(decisions.values())).reason
    return "; ".join(f"{slot}: {d.reason}" for slot, d in decisions.items())


def _check_kernel_dtypes(node, facts, rule):
    """A customize_dtypes dtype the op's kernel does not take fails compilation on the NPU (the engine filters the
    kernel's dtypes by the line and finds none left); ops whose library entry declares no dtypes are not checked."""
    declared = facts.library.declared_dtypes(facts.ir_type)
    if declared is None:
        return
    missing = sorted({token for token in (*rule.inputs, *rule.outputs) if token} - declared)
    if missing:
        raise RuleViolation("customize_dtypes", (
            f"After filtering dtypes by custom dtypes, the supported dtypes for op [{node.name}] are empty: "
            f"customize_dtypes line {rule.line} asks for {', '.join(missing)}, but {facts.ir_type} on "
            f"{facts.library.soc} takes {', '.join(sorted(declared))}"))


def _input_count_problem(node, sig, facts, rule):
    """A line giving more input dtypes than the op has inputs (the extra ones pin nothing), or fewer (the rest keep
    their dtype, which an empty token says explicitly); None when the counts agree or the line gives none.

    "The op's inputs" are the IR type's declared inputs, optional ones included (MatMulV2 declares a bias, so the
    common `InputDtype:float16,float16,float32` line is right for TF MatMul), else the TF node's."""
    given = len(rule.inputs)
    if not given:
        return None
    declared = facts.library.declared_inputs(facts.ir_type)
    has = max(declared or 0, len(sig.inputs))
    if given > has:
        return (f"{given} input dtypes for op '{node.name}' ({facts.ir_type}), which has {has} input{'s' if has > 1 else ''}: the last "
                f"{given - has} pin nothing (the real engine ignores them silently)")
    if given < len(sig.inputs):
        return (f"{given} input dtype{'s' if given > 1 else ''} for op '{node.name}' ({facts.ir_type}), which has "
                f"{len(sig.inputs)} inputs: inputs {given} to {len(sig.inputs) - 1} keep their dtype; write an empty "
                "token for each (e.g. 'float16,,') to say so")
    return None


def _wanted(tokens, ports):
    """Logical dtypes a customize_dtypes rule asks for, per port (None: keep). Only float ports take floats."""
    wanted = []
    for index, port in enumerate(ports):
        token = tokens[index] if index < len(tokens) else None
        dtype = DTYPES_BY_NAME.get(token) if token else None
        wanted.append(dtype if dtype is not None and port.dtype in FLOAT_DTYPES and port.slot is not None
                      else None)
    return wanted


def _not_emulated(kind, tokens, wanted):
    """Rule tokens the pass leaves alone (integer dtypes, ports beyond the op's, float dtypes on int ports)."""
    return [f"{kind} {i} {token}" for i, token in enumerate(tokens)
            if token and (i >= len(wanted) or wanted[i] is None)]


def _keep_unnamed(wanted, ports):
    """Ports a rule leaves empty keep their graph dtype, even when the kernel moves to float32."""
    return tuple(w if w is not None else (p.dtype if p.slot is not None and p.dtype in FLOAT_DTYPES else None)
                 for w, p in zip(wanted, ports))


def _spell(tokens):
    return ",".join(t or "-" for t in tokens) or "-"
