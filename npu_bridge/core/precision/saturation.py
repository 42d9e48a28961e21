"""Saturation mode: what a float16 overflow produces on the first-generation Ascend910.

In saturation mode (the default on ascend910 and the 310 family, or after npu_plugin.set_device_sat_mode(0)) an
AI core result beyond the float16 range becomes +-65504 and the overflow is recorded in a status register, which
NPULossScaleOptimizer reads to skip the step. In INF/NaN mode (910B and later) the result is IEEE +-inf.

The emulation keeps every rounding point where the pass put it (the float16 outputs of retyped ops and the Casts
to float16) and clamps each of those outputs once, right where it is produced, to [-65504, 65504] (a ClipByValue
of a float32 value before its Cast, a Minimum and a Maximum of a float16 one), and every reader of the output reads
the clamp instead. Values inside the range pass unchanged, so results differ from INF/NaN mode only where an
overflow happened. NaN (0/0, inf-inf of the user's own inputs) stays NaN.

The status register: NPULossScaleOptimizer builds an Identity of a False constant that carries STATUS_ATTR and
depends on the gradients. Here its input becomes "did any clamped output upstream of it overflow in this run",
computed from each clamp's input and output. A clamp inside a v1 while-loop body or cond branch counts too: its
flag leaves the loop as a loop-carried "any overflow so far" and the branch as a Merge with False from the other
branch (frames.py).
"""
import numpy as np
from tensorflow.core.framework import attr_value_pb2, types_pb2
from tensorflow.python.framework import tensor_util

from npu_bridge.core.contract import (
    MARK_EMULATED, MARK_SATURATION, MARKER, NAME_SUFFIX, REF_VARIABLE_OPS, SATURATION_SUFFIX, SATURATION_UPPER_SUFFIX,
    STATUS_ATTR,
)
from npu_bridge.core.graph import Tensor, encode_attrs
from npu_bridge.core.precision.decide import SOURCE_OPS
from npu_bridge.core.precision.frames import ROOT, Contexts, FlagLifter
from npu_bridge.core.precision.report import TensorRef
from npu_bridge.core.precision.rules import EXACT_ON_ROUNDED
from npu_bridge.core.precision.typeattrs import DT_FLOAT, DT_HALF

FLOAT16_MAX = 65504.0

# Outputs that cannot leave the float16 range when their inputs are in it: data movement, selection, sign and
# v1 control flow (which only forwards). A user's float16 Placeholder or variable holds what was given to it.
_NEVER_OVERFLOW = EXACT_ON_ROUNDED | SOURCE_OPS | REF_VARIABLE_OPS | frozenset({
    "ReadVariableOp", "Enter", "RefEnter", "Exit", "RefExit", "Merge", "RefMerge", "Switch", "RefSwitch",
    "NextIteration", "RefNextIteration", "IdentityN", "StopGradient", "PreventGradient", "ZerosLike", "OnesLike",
    "Fill", "Sign", "Floor", "Ceil", "Round", "Rint", "Sigmoid", "Tanh", "Cos", "Sin", "Erf", "Softmax",
})
_LOOP_OR_BRANCH_ENTRIES = frozenset({"Enter", "RefEnter", "Switch", "RefSwitch"})


def _const_attrs(value, dtype=types_pb2.DT_HALF, np_dtype=np.float16):
    return encode_attrs({"dtype": attr_value_pb2.AttrValue(type=dtype),
                         "value": attr_value_pb2.AttrValue(tensor=tensor_util.make_tensor_proto(
                             np.asarray(value, np_dtype))),
                         MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})


_MARK = encode_attrs({MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})


def float16_results(builder):
    """(float16 outputs to clamp where they are produced, Casts from float32 to float16 to clamp before).

    The first: outputs of retyped or user float16 ops. The second: the Casts that round a float32 value (added by
    the pass, or the user's), whose float32 input is clamped instead: a float32 clamp costs a fraction of a
    float16 one on a CPU, and the Cast's rounding of a value clamped below 65520 gives at most 65504, exactly
    where a saturating conversion does.
    """
    halves, casts = [], []
    graph = builder.graph
    for node in builder.originals:
        if node.op in _NEVER_OVERFLOW or _already_clamped(graph, node):
            continue
        if _rounds_float32(node):
            if not _cannot_overflow(graph, node.inputs[0]):
                casts.append(node)
            continue
        sig = builder.signatures[node.name]
        changes = builder.plans[node.name].changes
        for index, port in enumerate(sig.outputs):
            dtype = changes.get(port.slot, port.dtype) if port.slot is not None else port.dtype
            if dtype == DT_HALF and not port.is_ref:
                halves.append(Tensor(node.name, index))
    for name in builder.created:
        _, src, dst, _ = builder.pending[name]
        if dst == DT_HALF:
            if src == DT_FLOAT:
                cast = graph.nodes[name]
                if not _cannot_overflow(graph, cast.inputs[0]):
                    casts.append(cast)
            else:
                halves.append(Tensor(name, 0))
    return halves, casts


def _cannot_overflow(graph, tensor):
    """Is `tensor` the float32 result of an op computed between Casts that cannot leave the float16 range?

    Such an op (a Relu, ReluGrad or MaxPool of float16 values, computed in float32 because that is faster on a
    CPU) gives what the same op retyped to float16 gives, and a retyped one is not clamped (_NEVER_OVERFLOW);
    its Cast to float16 needs no clamp either. Skipping it changes no value and saves a pass over the tensor.
    """
    producer = graph.nodes.get(tensor.node)
    if producer is None or producer.op not in _NEVER_OVERFLOW:
        return False
    marker = producer.node_def.attr.get(MARKER)
    return marker is not None and marker.s == MARK_EMULATED


def _rounds_float32(node):
    attrs = node.node_def.attr
    return node.op == "Cast" and attrs["SrcT"].type == DT_FLOAT and attrs["DstT"].type == DT_HALF


def _already_clamped(graph, node):
    """A node of a graph this pass rewrote before: its float16 outputs are read through clamps already."""
    attrs = node.node_def.attr
    if MARKER in attrs and attrs[MARKER].s == MARK_SATURATION:
        return True
    if node.op == "Cast" and node.inputs and node.inputs[0].node.endswith(SATURATION_SUFFIX):
        return True
    return any(consumer.name.endswith((SATURATION_SUFFIX, SATURATION_UPPER_SUFFIX)) for consumer, _ in graph.consumers(Tensor(node.name, 0)))


# The largest float32 below 65520: a value clamped to it rounds to 65504 in float16; 65520 and above overflow.
_FLOAT32_BOUND = float(np.nextafter(np.float32(65520.0), np.float32(0.0)))


def saturate(graph, builder, tensor_map, folded=frozenset()):
    """Clamp every float16 result of `graph` (the pass's working Graph) and fill in loss scaling's status flags.

    tensor_map (user tensor name -> TensorRef) is updated in place so fetches and feeds of a user tensor reach
    the clamped value. `folded`: nodes the graph engine computes on the host before the run (constant folding):
    a Cast of one to float16 is clamped, as the engine's float16 conversion saturates, but raises no device status.
    Returns the number of clamps.
    """
    halves, casts = float16_results(builder)
    if not halves and not casts:
        return 0
    in_frames = any(node.op in ("Enter", "RefEnter") for node in graph.order)
    bounds, new_nodes = {}, []

    def clamp(tensor, dtype, device):
        """The clamp of `tensor`; a constant read inside a while loop must live in the loop's frame, so there
        the bounds get a control input from the producer; outside loops one pair per dtype serves the graph."""
        key = (dtype, tensor.node if in_frames else "")
        if key not in bounds:
            tag = "Fp16" if dtype == DT_HALF else "Fp32"
            base = f"{tensor.node}-{tensor.port}-Sat{tag}" if in_frames else f"Sat{tag}"
            control = (f"^{tensor.node}",) if in_frames else ()
            limit, np_dtype = (FLOAT16_MAX, np.float16) if dtype == DT_HALF else (_FLOAT32_BOUND, np.float32)
            low, high = graph.reserve_name(f"{base}Min{NAME_SUFFIX}"), graph.reserve_name(f"{base}Max{NAME_SUFFIX}")
            new_nodes.append((low, "Const", control, device, _const_attrs(-limit, dtype, np_dtype)))
            new_nodes.append((high, "Const", control, device, _const_attrs(limit, dtype, np_dtype)))
            bounds[key] = (Tensor(low, 0), Tensor(high, 0))
        low, high = bounds[key]
        name = graph.reserve_name(f"{tensor.node}-{tensor.port}{SATURATION_SUFFIX}")
        if dtype == DT_FLOAT:
            new_nodes.append((name, "ClipByValue", (tensor, low, high), device, _CLIP))
        else:
            upper = graph.reserve_name(f"{tensor.node}-{tensor.port}{SATURATION_UPPER_SUFFIX}")
            new_nodes.append((upper, "Minimum", (tensor, high), device, _HALF_BOUND))
            new_nodes.append((name, "Maximum", (Tensor(upper, 0), low), device, _HALF_BOUND))
        return Tensor(name, 0)

    clamped, flagged = {}, {}
    for tensor in halves:
        clamped[tensor] = clamp(tensor, DT_HALF, graph.nodes[tensor.node].device)
        flagged[tensor] = (clamped[tensor], DT_HALF)
    for tensor, result in clamped.items():
        for consumer, index in list(graph.consumers(tensor)):
            graph.set_input(consumer, index, result)
    before = {}
    for cast in casts:
        source = cast.inputs[0]
        if source not in before:
            before[source] = clamp(source, DT_FLOAT, cast.device)
            if not _host_folded(graph, source, folded):
                flagged[source] = (before[source], DT_FLOAT)
        graph.set_input(cast, 0, before[source])
    graph.add_nodes(_with_controls(new_nodes))
    _repoint(tensor_map, clamped, builder)
    _fill_status(graph, {t: c for t, c in flagged.items() if not _host_folded_cast(graph, t, folded)})
    return len(clamped) + len(before)


# A float32 clamp is one ClipByValue. A float16 one is Minimum then Maximum: TensorFlow's CPU ClipByValue runs a
# scalar loop that converts every float16 element (1.6 ms per million elements, measured), the two vectorised
# ops together 0.66 ms, with the same results for every value, NaN and -0 included (tests/runtime/test_saturation.py).
_CLIP = encode_attrs({"T": attr_value_pb2.AttrValue(type=DT_FLOAT), MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})
_HALF_BOUND = encode_attrs({"T": attr_value_pb2.AttrValue(type=DT_HALF),
                            MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})


def _host_folded(graph, tensor, folded):
    """Is `tensor` computed on the host before the run (a constant, or folded from constants)?"""
    source = graph.nodes.get(tensor.node)
    return source is not None and (source.op in ("Const", "HostConst") or source.name in folded)


def _host_folded_cast(graph, tensor, folded):
    node = graph.nodes[tensor.node]
    return node.op == "Cast" and bool(node.inputs) and _host_folded(graph, node.inputs[0], folded)


def _with_controls(new_nodes):
    """add_nodes takes Tensors; a control input is spelled as a Tensor whose name starts with '^'."""
    for name, op, inputs, device, attrs in new_nodes:
        yield name, op, tuple(Tensor(i, 0) if isinstance(i, str) else i for i in inputs), device, attrs


def _repoint(tensor_map, clamped, builder):
    by_location = {t.name: c for t, c in clamped.items()}
    for user, ref in list(tensor_map.items()):
        clamp = by_location.get(ref.name)
        if clamp is not None:
            tensor_map[user] = TensorRef(clamp.name, ref.dtype)
    originals = {node.name for node in builder.originals}
    for tensor, clamp in clamped.items():
        if tensor.node in originals and tensor.name not in tensor_map:
            tensor_map[tensor.name] = TensorRef(clamp.name, "float16")


def _status_nodes(graph):
    return [node for node in graph.order if node.op == "Identity" and STATUS_ATTR in node.node_def.attr]


def _fill_status(graph, clamped):
    """clamped: {raw tensor: (its clamp, dtype)} for every clamp whose overflow the device status sees.

    A status outside v1 control flow reads every clamp it depends on, those inside loops and branches through
    FlagLifter; one inside a loop or branch (not what NPULossScaleOptimizer builds) reads those outside only.
    """
    statuses = _status_nodes(graph)
    if not statuses:
        return
    contexts = Contexts(graph) if any(n.op in _LOOP_OR_BRANCH_ENTRIES for n in graph.order) else None
    by_clamp = {c.node: (t, (c, dtype)) for t, (c, dtype) in clamped.items()}
    flag_of, lifted = {}, {}
    new_nodes = []
    lifter = FlagLifter(graph, contexts, new_nodes)
    shape = graph.reserve_name(f"SatFp16Flat{NAME_SUFFIX}")
    axis = graph.reserve_name(f"SatFp16Axis{NAME_SUFFIX}")
    new_nodes.append((shape, "Const", (), "", _const_attrs([-1], types_pb2.DT_INT32, np.int32)))
    new_nodes.append((axis, "Const", (), "", _const_attrs([0], types_pb2.DT_INT32, np.int32)))
    for status in statuses:
        at_root = contexts is None or contexts.of(Tensor(status.name, 0)) == ROOT
        flags, framed = [], []
        for name in sorted(_ancestors(graph, status)):
            pair = by_clamp.get(name)
            if pair is None:
                continue
            context = contexts.of(pair[0]) if contexts is not None else ROOT
            if context != ROOT and not at_root:
                continue
            if name not in flag_of:
                flag_of[name] = _flag_nodes(graph, pair, Tensor(shape, 0), Tensor(axis, 0), new_nodes, context)
            if context == ROOT:
                flags.append(flag_of[name])
            else:
                framed.append((flag_of[name], context))
        if framed:
            key = tuple(framed)
            if key not in lifted:
                lifted[key] = lifter.to_root(framed)
            flags.extend(lifted[key])
        if not flags:
            continue
        packed = graph.reserve_name(f"{status.name}-Flags{NAME_SUFFIX}")
        any_flag = graph.reserve_name(f"{status.name}-Overflow{NAME_SUFFIX}")
        new_nodes.append((packed, "Pack", tuple(flags), "", encode_attrs({
            "T": attr_value_pb2.AttrValue(type=types_pb2.DT_BOOL), "N": attr_value_pb2.AttrValue(i=len(flags)),
            "axis": attr_value_pb2.AttrValue(i=0), MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})))
        new_nodes.append((any_flag, "Any", (Tensor(packed, 0), Tensor(axis, 0)), "", _ANY))
        graph.set_input(status, 0, Tensor(any_flag, 0))
    graph.add_nodes(_with_controls(new_nodes))


_ANY = encode_attrs({"Tidx": attr_value_pb2.AttrValue(type=types_pb2.DT_INT32),
                     "keep_dims": attr_value_pb2.AttrValue(b=False), MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})
_NOT_EQUAL = {dtype: encode_attrs({"T": attr_value_pb2.AttrValue(type=dtype),
                                   "incompatible_shape_error": attr_value_pb2.AttrValue(b=True),
                                   MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})
              for dtype in (DT_HALF, DT_FLOAT)}
_RESHAPE = encode_attrs({"T": attr_value_pb2.AttrValue(type=types_pb2.DT_BOOL),
                         "Tshape": attr_value_pb2.AttrValue(type=types_pb2.DT_INT32),
                         MARKER: attr_value_pb2.AttrValue(s=MARK_SATURATION)})


def _flag_nodes(graph, pair, shape, axis, new_nodes, context=ROOT):
    """Any(raw != clamped): true when the output overflowed (a NaN counts too, as on the NPU's status register).

    Inside a loop the shape and axis constants must live in the loop's frame: there they get a control input
    from the clamped op, as the clamp's bounds do.
    """
    raw, (clamp, dtype) = pair
    differs = graph.reserve_name(f"{clamp.node}-Differs")
    flat = graph.reserve_name(f"{clamp.node}-Flat")
    flag = graph.reserve_name(f"{clamp.node}-Flag")
    if context != ROOT:
        control = (f"^{raw.node}",)
        shape = Tensor(graph.reserve_name(f"{clamp.node}-FlatShape"), 0)
        axis = Tensor(graph.reserve_name(f"{clamp.node}-FlatAxis"), 0)
        new_nodes.append((shape.node, "Const", control, "", _const_attrs([-1], types_pb2.DT_INT32, np.int32)))
        new_nodes.append((axis.node, "Const", control, "", _const_attrs([0], types_pb2.DT_INT32, np.int32)))
    new_nodes.append((differs, "NotEqual", (raw, clamp), "", _NOT_EQUAL[dtype]))
    new_nodes.append((flat, "Reshape", (Tensor(differs, 0), shape), "", _RESHAPE))
    new_nodes.append((flag, "Any", (Tensor(flat, 0), axis), "", _ANY))
    return Tensor(flag, 0)


def _ancestors(graph, node):
    """Names of every node `node` depends on through data and control inputs."""
    seen, stack = set(), [node]
    while stack:
        current = stack.pop()
        for source in current.inputs:
            if source.node not in seen and source.node in graph.nodes:
                seen.add(source.node)
                stack.append(graph.nodes[source.node])
        for name in current.control_inputs:
            if name not in seen and name in graph.nodes:
                seen.add(name)
                stack.append(graph.nodes[name])
    return seen
