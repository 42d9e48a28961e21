"""Turn NodePlans into a rewired graph: attribute changes, Casts, and the user-tensor map.

Every producer output has a logical dtype (what the NPU holds there) and a location (the tensor that holds
that value: the output itself, or the Cast rounding an op computed in float32 between casts). Each consumer
input asks for the value in its logical dtype, then in its kernel's dtype. Conversions are memoised per
(location, dtype), so one Cast serves every consumer of an output; a widening Cast (float16 -> float32) read
back in float16 is skipped by reading its input; a Cast the user already wrote for the same tensor and dtype is
reused. An op that only selects or copies (rules.EXACT_ON_ROUNDED), computing in float32 on rounded inputs,
produces rounded values, so float32 consumers read its raw output: that removes a Cast pair per edge, and lets
TensorFlow's oneDNN rewrite pair MaxPoolGrad with the MaxPool whose output it reads (its fast path). Names
follow `<src>-<port>-CastTo{Fp16,Bf16,Fp32}-NpuBridge`.
"""
from functools import lru_cache

import numpy as np
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.framework import dtypes, tensor_util

from npu_bridge.core.contract import MARK_CAST, MARK_RETYPED, MARKER, MARKER_OUT, cast_name
from npu_bridge.core.graph import Tensor, encode_attrs
from npu_bridge.core.precision.decide import WRITTEN_MARKERS
from npu_bridge.core.precision.folding import folded_value
from npu_bridge.core.precision.report import TensorRef
from npu_bridge.core.precision.rules import EXACT_ON_ROUNDED
from npu_bridge.core.precision.typeattrs import DT_FLOAT, DT_HALF, FLOAT_DTYPES, REDUCED_DTYPES, dtype_name


class CastPlanError(ValueError):
    def __init__(self, node, detail):
        self.node = node
        super().__init__(detail)


@lru_cache(maxsize=None)
def _cast_attrs(src, dst):
    """The attributes of an added Cast, in wire format (six dtype pairs at most, encoded once)."""
    return encode_attrs({"SrcT": attr_value_pb2.AttrValue(type=src), "DstT": attr_value_pb2.AttrValue(type=dst),
                         "Truncate": attr_value_pb2.AttrValue(b=False), MARKER: attr_value_pb2.AttrValue(s=MARK_CAST)})


class CastBuilder:
    """Applies the plans to the graph the Decider read (a private copy of the caller's GraphDef)."""

    def __init__(self, ctx, plans, signatures, changed):
        self.ctx = ctx
        self.changed = [ctx.graph.nodes[name] for name in changed]
        self.graph = ctx.graph
        self.plans = plans
        self.signatures = signatures
        self.originals = list(self.graph.order)
        self.wire = {}
        self.memo = {}
        self.user_casts = {}
        self.cast_input = {}
        self.exact = {}         # output of an EXACT_ON_ROUNDED op computed in float32 -> the dtype it is exact in
        self.caused = {}
        self.created = []
        self.pending = {}       # name of a Cast to add -> (input Tensor, SrcT, DstT, device)
        # A constant the reduced dtype destroys where an op reads it: (the Cast reading it, the op, the sentence
        # the op's report row adds, the warning for the log), once per constant and dtype.
        self.findings = []
        self._checked = set()
        self._index_user_casts()

    def apply(self):
        """Rewrite the graph; returns the tensor map (user tensor name -> TensorRef)."""
        for node in self.changed:
            self.ctx.current = node.name
            self._change_attrs(node)
        for node in self.changed:
            self.ctx.current = node.name
            self._locate_outputs(node)
        plans, wired = self.plans, self.wire.keys()
        for node in self.originals:
            plan = plans[node.name]
            if plan.in_logical or plan.changes or not wired.isdisjoint(node.inputs):
                self.ctx.current = node.name
                self._rewire_inputs(node)
        self.graph.add_nodes((name, "Cast", (source,), device, _cast_attrs(src, dst))
                             for name, (source, src, dst, device) in self.pending.items())
        return self._tensor_map()

    def _index_user_casts(self):
        for node in self.originals:
            if node.op != "Cast" or node.has_control_inputs or len(node.inputs) != 1:
                continue
            attrs = node.node_def.attr
            src, dst = attrs["SrcT"].type, attrs["DstT"].type
            if MARKER in attrs:
                continue
            self.cast_input[node.name] = node.inputs[0]
            if src != dst and src in FLOAT_DTYPES and dst in FLOAT_DTYPES and \
                    not ("Truncate" in attrs and attrs["Truncate"].b):
                self.user_casts.setdefault((node.inputs[0], dst), (node.name, src))

    def _change_attrs(self, node):
        plan = self.plans[node.name]
        if not plan.changes and plan.marker not in WRITTEN_MARKERS:
            return
        attrs = node.node_def.attr
        for slot, dtype in plan.changes.items():
            if slot.index < 0:
                attrs[slot.attr].type = dtype
            else:
                attrs[slot.attr].list.type[slot.index] = dtype
        attrs[MARKER].s = plan.marker.encode()
        if plan.out_logical:
            sig = self.signatures[node.name]
            outs = [logical or plan.changes.get(port.slot, port.dtype)
                    for logical, port in zip(plan.out_logical, sig.outputs)]
            attrs[MARKER_OUT].list.type.extend(outs)

    def _locate_outputs(self, node):
        """Record the logical dtype and location of every output the plan changes (others stay implicit)."""
        plan = self.plans[node.name]
        if not plan.changes and not (plan.out_logical and plan.marker != "rewritten"):
            return
        sig = self.signatures[node.name]
        exact_in = _rounded_inputs_dtype(node, plan, sig)
        for index, port in enumerate(sig.outputs):
            physical = plan.changes.get(port.slot, port.dtype)
            logical = physical
            if plan.out_logical and plan.out_logical[index] and plan.marker != "rewritten":
                logical = plan.out_logical[index]
            tensor = Tensor(node.name, index)
            location = tensor
            if logical != physical:
                location = self.memo[(tensor, logical)] = self._rounding(tensor, physical, logical, node.name)
                if exact_in == logical and physical == DT_FLOAT:
                    self.exact[tensor] = logical
            if logical != port.dtype or location != tensor:
                self.wire[tensor] = (logical, location)

    def _rounding(self, tensor, physical, logical, owner):
        """The Cast rounding an output computed in float32 between casts: the user's own Cast when the graph
        already rounds that output to that dtype, else a new one."""
        reuse = self.user_casts.get((tensor, logical))
        if reuse is not None and reuse[1] == physical:
            return Tensor(reuse[0], 0)
        return self._new_cast(tensor, physical, logical, owner)

    def _source(self, tensor):
        """(logical dtype, location) of a producer output."""
        found = self.wire.get(tensor)
        if found is None:
            return self.signatures[tensor.node].outputs[tensor.port].dtype, tensor
        return found

    def _rewire_inputs(self, node):
        plan = self.plans[node.name]
        sig = self.signatures[node.name]
        for index, port in enumerate(sig.inputs):
            source = node.inputs[index]
            physical = plan.changes.get(port.slot, port.dtype)
            wanted = physical
            if plan.in_logical and plan.in_logical[index]:
                wanted = plan.in_logical[index]
            logical, location = self._source(source)
            if location.node == node.name or (logical == wanted and location == source and wanted == physical):
                continue        # a user Cast that is itself the rounding of its input reads the raw output
            if node.name in self.cast_input and node.node_def.attr["DstT"].type == logical:
                self._cast_already_done(node, logical, location)
                continue
            if logical not in FLOAT_DTYPES or wanted not in FLOAT_DTYPES or physical not in FLOAT_DTYPES:
                raise CastPlanError(node.name, f"input {index} reads '{source.name}' as {dtype_name(logical)} but "
                                               f"needs {dtype_name(wanted)}; only float dtypes can be cast")
            if physical == DT_FLOAT and wanted in (logical, DT_FLOAT) and self.exact.get(source) == logical:
                value = source          # the raw float32 output already holds the rounded value
            else:
                value = self._value_of(source, wanted, node)
                if wanted != physical:
                    value = self._convert(value, wanted, physical, node.name)
            if value != source:
                self.graph.set_input(node, index, value)

    def _cast_already_done(self, node, dtype, location):
        """A user Cast to the dtype its input now holds reads that value as is (Cast with SrcT == DstT passes it
        through) instead of through a widening Cast the pass would add only for it to narrow again."""
        node.node_def.attr["SrcT"].type = dtype
        node.node_def.attr[MARKER].s = MARK_RETYPED
        if location != node.inputs[0]:
            self.graph.set_input(node, 0, location)
        self.plans[node.name] = self.plans[node.name].noting(
            f"; its input already holds {dtype_name(dtype)}, so it reads it as is")

    def _value_of(self, source, dtype, consumer):
        """A tensor holding `source`'s logical value in `dtype`."""
        logical, location = self._source(source)
        if dtype == logical:
            return location
        reuse = self.user_casts.get((source, dtype))
        if reuse is not None and reuse[0] != consumer.name and \
                (reuse[1] == logical or (logical in REDUCED_DTYPES and reuse[1] == DT_FLOAT)):
            return Tensor(reuse[0], 0)
        return self._convert(location, logical, dtype, consumer.name)

    def _convert(self, location, src, dst, owner):
        """`location` (a tensor of dtype src) converted to dst: memoised, looks through widening Casts."""
        key = (location, dst)
        found = self.memo.get(key)
        if found is not None:
            return found
        pending = self.pending.get(location.node)
        producer = self.graph.nodes.get(location.node)
        if pending is not None and pending[1] == dst and pending[2] == src == DT_FLOAT:
            result = pending[0]     # a widening Cast this pass adds: its input already holds the value
        elif producer is not None and producer.op == "Cast" and src == DT_FLOAT and dst in REDUCED_DTYPES \
                and not producer.has_control_inputs and producer.node_def.attr["SrcT"].type == dst:
            inner = self.cast_input.get(producer.name)
            result = self._value_of(inner, dst, producer) if inner is not None else producer.inputs[0]
        else:
            # Outputs are all located by now: a tensor without a wire entry keeps its value, so a user Cast
            # reading it computes exactly this conversion.
            reuse = self.user_casts.get((location, dst))
            if reuse is not None and reuse[1] == src and location not in self.wire:
                result = Tensor(reuse[0], 0)
            else:
                result = self._new_cast(location, src, dst, owner)
        self.memo[key] = result
        return result

    def _new_cast(self, location, src, dst, owner):
        """Name a Cast of `location` to `dst`; it is added to the graph, with all the others, at the end."""
        graph = self.graph
        name = graph.reserve_name(cast_name(location.node, location.port, dtype_name(dst)))
        producer = graph.nodes.get(location.node)
        device = producer.device if producer is not None else self.pending[location.node][3]
        self.pending[name] = (location, src, dst, device)
        self.created.append(name)
        self.caused.setdefault(owner, []).append(name)
        if dst in REDUCED_DTYPES and producer is not None and producer.op in ("Const", "HostConst"):
            self._check_constant(producer, dst, owner, name)
        elif dst in REDUCED_DTYPES and producer is not None and producer.name in self.ctx.folded:
            self._check_folded(producer, dst, owner, name)
        return Tensor(name, 0)

    @property
    def warnings(self):
        return [warning for _, _, _, warning in self.findings]

    def notes(self):
        """{op name: [(Cast name, sentence its report row adds)]}."""
        found = {}
        for cast, reader, note, _ in self.findings:
            found.setdefault(reader, []).append((cast, note))
        return found

    def _check_constant(self, const, dtype, reader, cast):
        """Note a small constant that the reduced dtype turns into 0 or +-inf where `reader` reads it: an epsilon of
        1e-8 is 0 in float16 and a -1e9 attention mask is -inf, the faults docs/BEHAVIOUR.md §7 says users hunt."""
        if (const.name, dtype) in self._checked:
            return
        self._checked.add((const.name, dtype))
        problem = constant_range_problem(const.node_def, dtype, self.ctx.saturation)
        if problem is None:
            return
        self.findings.append((cast, reader, f"reads constant '{const.name}' ({problem})",
                              f"constant '{const.name}' ({problem}) where op '{reader}' reads it in "
                              f"{dtype_name(dtype)}"))

    def _check_folded(self, node, dtype, reader, cast):
        """The same for a value the graph engine folds from constants before the run (`Fill * Const` building a
        -2**32+1 attention mask): the folded value itself is checked where numpy can compute it (folding.py), so a
        -1e9 times a zero mask is no fault and 1e-4 * 1e-4 is; otherwise the constants it is computed from are (a
        mask of ones times -4.3e9 is -inf in float16 wherever the Const is)."""
        if (node.name, dtype) in self._checked:
            return
        self._checked.add((node.name, dtype))
        value = folded_value(self.graph, node, self.ctx.folded)
        if value is not None:
            problem = array_range_problem(value, dtype, self.ctx.saturation)
            if problem is not None:
                self._warn_folded(node, dtype, reader, cast, f"folded from constants before the run: {problem}")
            return
        for const in _folded_constants(self.graph, node, self.ctx.folded):
            problem = constant_range_problem(const.node_def, dtype, self.ctx.saturation)
            if problem is not None:
                self._warn_folded(node, dtype, reader, cast,
                                  f"folded from constants before the run; its constant '{const.name}': {problem}")
                return

    def _warn_folded(self, node, dtype, reader, cast, how):
        self.findings.append((cast, reader, f"reads constant '{node.name}' ({how})",
                              f"constant '{node.name}' ({how}) where op '{reader}' reads it in {dtype_name(dtype)}"))

    def _tensor_map(self):
        tensor_map = {}
        for tensor, (logical, location) in self.wire.items():
            if self.signatures[tensor.node].outputs[tensor.port].dtype in FLOAT_DTYPES:
                tensor_map[tensor.name] = TensorRef(location.name, dtype_name(logical))
        return tensor_map


def _rounded_inputs_dtype(node, plan, sig):
    """The reduced dtype every float input of an EXACT_ON_ROUNDED op computed in float32 is rounded to, or None
    (another op, a float input read unrounded, or inputs rounded to different dtypes)."""
    if not plan.emulated or node.op not in EXACT_ON_ROUNDED or not plan.in_logical:
        return None
    found = {plan.in_logical[i] for i, port in enumerate(sig.inputs) if port.dtype in FLOAT_DTYPES}
    if len(found) != 1:
        return None
    dtype = found.pop()
    return dtype if dtype in REDUCED_DTYPES else None


def _folded_constants(graph, node, folded, limit=64):
    """The float Consts a folded node is computed from (through other folded nodes; at most `limit` nodes seen)."""
    found, seen, stack = [], {node.name}, [node]
    while stack and len(seen) < limit:
        for source in stack.pop().inputs:
            producer = graph.nodes.get(source.node)
            if producer is None or producer.name in seen:
                continue
            seen.add(producer.name)
            if producer.op in ("Const", "HostConst"):
                if producer.node_def.attr["dtype"].type in FLOAT_DTYPES:
                    found.append(producer)
            elif producer.name in folded:
                stack.append(producer)
    return found


_MAX_CHECKED_ELEMENTS = 64      # epsilons, scales and mask values; not weight tensors of frozen graphs


def constant_range_problem(node_def, dtype, saturation=False):
    """'1e-08 is 0 in float16' / '-1e+09 is -inf in float16' for a float32 Const of at most 64 elements whose
    nonzero values round to 0 or whose finite values overflow in `dtype`; None otherwise. In saturation mode a
    float16 overflow is +-65504 instead: '-1e+09 is -65504 in float16 (saturation mode)'."""
    proto = node_def.attr["value"].tensor
    count = 1
    for dim in proto.tensor_shape.dim:
        count *= dim.size
    if count > _MAX_CHECKED_ELEMENTS:
        return None
    return array_range_problem(tensor_util.MakeNdarray(proto), dtype, saturation)


def array_range_problem(array, dtype, saturation=False):
    """The sentence constant_range_problem gives for the values of `array` (any size), or None."""
    values = np.asarray(array).astype(np.float32).ravel()
    with np.errstate(over="ignore"):       # the overflow is what this looks for
        rounded = values.astype(dtypes.as_dtype(dtype).as_numpy_dtype).astype(np.float32)
    lost = values[((values != 0) & (rounded == 0)) | (np.isfinite(values) & ~np.isfinite(rounded))]
    if lost.size == 0:
        return None
    value = float(lost[0])
    if abs(value) < 1:
        return f"{value:g} is 0 in {dtype_name(dtype)}"
    if saturation and dtype == DT_HALF:
        return f"{value:g} is {'' if value > 0 else '-'}65504 in float16 (saturation mode)"
    return f"{value:g} is {'inf' if value > 0 else '-inf'} in {dtype_name(dtype)}"
