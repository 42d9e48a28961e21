"""Which type attribute decides the dtype of each input and output port of a node.

Precision is decided per type attribute, not per node: MatMul's single `T` covers a, b and product together,
FusedBatchNormV3 has `T` for x/y and `U` for scale/offset/mean/variance, IdentityN has one attribute element
per port, AddN repeats `T` over N inputs. The OpDef registry says which attribute (or fixed type) each argument
uses; this module expands that per node and caches the per-op-type work, since a training graph has thousands
of nodes but a few dozen op types.
"""
from functools import lru_cache
from typing import NamedTuple

from tensorflow.core.framework import types_pb2
from tensorflow.python.framework import kernels, op_def_registry

DT_FLOAT = types_pb2.DT_FLOAT
DT_HALF = types_pb2.DT_HALF
DT_BFLOAT16 = types_pb2.DT_BFLOAT16
DT_RESOURCE = types_pb2.DT_RESOURCE
DT_VARIANT = types_pb2.DT_VARIANT
FLOAT_DTYPES = frozenset({DT_FLOAT, DT_HALF, DT_BFLOAT16})
REDUCED_DTYPES = frozenset({DT_HALF, DT_BFLOAT16})

DTYPE_NAMES = {DT_FLOAT: "float32", DT_HALF: "float16", DT_BFLOAT16: "bfloat16"}
DTYPES_BY_NAME = {"float32": DT_FLOAT, "float16": DT_HALF, "bfloat16": DT_BFLOAT16}
# The spelling of the Ascend op library ("float" for float32).
ASCEND_NAMES = {DT_FLOAT: "float", DT_HALF: "float16", DT_BFLOAT16: "bfloat16"}


def dtype_name(dtype):
    return DTYPE_NAMES.get(dtype) or types_pb2.DataType.Name(dtype)[3:].lower()


class Slot(NamedTuple):
    """A type attribute, or one element of a list(type) attribute (index >= 0)."""

    attr: str
    index: int = -1

    def __str__(self):
        return self.attr if self.index < 0 else f"{self.attr}[{self.index}]"


class Port(NamedTuple):
    """One input or output: its dtype now, and the Slot that sets it (None: fixed by the op definition)."""

    dtype: int
    slot: Slot | None
    is_ref: bool


class Signature(NamedTuple):
    inputs: tuple
    outputs: tuple
    slots: dict            # Slot -> current dtype, for every slot bound to at least one port
    is_call: bool          # a function call: every port is fixed by the function's signature
    has_state: bool        # ref or resource ports, or the op is stateful
    has_variant: bool      # a variant port: a tensor list, optional or dataset handle
    float_slots: dict      # the slots of `slots` whose dtype is float32, float16 or bfloat16
    float_only: frozenset  # float slots whose op definition does not admit float16 (FusedBatchNormV3's U)


class UnknownOpError(LookupError):
    """The op type is neither registered in TensorFlow nor a function of the graph's library."""


class MalformedNodeError(ValueError):
    """The node does not match its op definition (input count, missing attribute)."""


class _ArgSpec(NamedTuple):
    type_attr: str
    number_attr: str
    type_list_attr: str
    fixed: int
    is_ref: bool


class _OpSpec(NamedTuple):
    inputs: tuple
    outputs: tuple
    allowed: dict          # attr name -> frozenset of allowed dtypes (empty set: any)
    is_stateful: bool
    calls_function: bool
    defaults: dict         # attr name -> AttrValue default from the op definition
    shaping_attrs: tuple   # ((attr name, "type" | "number" | "list"), ...): what a node's ports depend on


def _arg_spec(arg):
    return _ArgSpec(arg.type_attr, arg.number_attr, arg.type_list_attr, arg.type, arg.is_ref)


def _op_spec(op_def, is_function):
    allowed = {a.name: frozenset(a.allowed_values.list.type) for a in op_def.attr if a.type in ("type", "list(type)")}
    calls_function = is_function or any(a.type in ("func", "list(func)") for a in op_def.attr)
    defaults = {a.name: a.default_value for a in op_def.attr if a.HasField("default_value")}
    shaping = {}
    for arg in (*op_def.input_arg, *op_def.output_arg):
        if arg.type_list_attr:
            shaping[arg.type_list_attr] = "list"
        elif arg.type_attr:
            shaping[arg.type_attr] = "type"
        if arg.number_attr:
            shaping[arg.number_attr] = "number"
    return _OpSpec(tuple(map(_arg_spec, op_def.input_arg)), tuple(map(_arg_spec, op_def.output_arg)),
                   allowed, op_def.is_stateful, calls_function, defaults, tuple(shaping.items()))


@lru_cache(maxsize=None)
def _registered_spec(op_type):
    op_def = op_def_registry.get(op_type)
    return None if op_def is None else _op_spec(op_def, False)


# Signatures of registered ops depend only on the op type and its shaping attribute values, so every pass shares
# them (a training graph has a few dozen distinct ones); signatures are never modified once made.
_REGISTERED_SIGNATURES = {}


class OpTable:
    """OpDef lookups for one graph: the global registry plus the graph's own function library."""

    def __init__(self, graph_def):
        self._functions = {f.signature.name: f.signature for f in graph_def.library.function}
        self._specs = {}
        self._function_signatures = {}

    def spec(self, op_type):
        spec = self._specs.get(op_type)
        if spec is None:
            if op_type in self._functions:
                spec = _op_spec(self._functions[op_type], True)
            else:
                spec = _registered_spec(op_type)
                if spec is None:
                    raise UnknownOpError(op_type)
            self._specs[op_type] = spec
        return spec

    def signature(self, node):
        """Per-port dtypes and slots of `node`, shared by every node of the same op and attribute values."""
        op = node.op
        spec = self.spec(op)
        node_attrs = node.node_def.attr
        values = []
        for name, kind in spec.shaping_attrs:
            value = node_attrs[name] if name in node_attrs else spec.defaults.get(name)
            if value is None:
                raise MalformedNodeError(f"attribute '{name}' of op {op} is missing and has no default")
            values.append(value.type if kind == "type" else value.i if kind == "number" else tuple(value.list.type))
        key = (op, tuple(values))
        cache = self._function_signatures if op in self._functions else _REGISTERED_SIGNATURES
        sig = cache.get(key)
        if sig is None:
            sig = cache[key] = _signature(spec, dict(zip((n for n, _ in spec.shaping_attrs), values)))
        if len(sig.inputs) != len(node.inputs):
            raise MalformedNodeError(f"op {op} takes {len(sig.inputs)} data inputs, the node has "
                                     f"{len(node.inputs)}")
        return sig


def _signature(spec, values):
    slots = {}
    inputs = _expand(spec.inputs, values, slots, spec.calls_function)
    outputs = _expand(spec.outputs, values, slots, spec.calls_function)
    has_state = spec.is_stateful or any(p.is_ref or p.dtype == DT_RESOURCE for p in inputs + outputs)
    float_slots = {slot: dtype for slot, dtype in slots.items() if dtype in FLOAT_DTYPES}
    float_only = frozenset(slot for slot in float_slots
                           if spec.allowed.get(slot.attr) and DT_HALF not in spec.allowed[slot.attr])
    has_variant = any(p.dtype == DT_VARIANT for p in inputs + outputs)
    return Signature(inputs, outputs, slots, spec.calls_function, has_state, has_variant, float_slots, float_only)


def _expand(args, values, slots, fixed_only):
    ports = []
    for arg in args:
        if arg.type_list_attr:
            for index, dtype in enumerate(values[arg.type_list_attr]):
                slot = None if fixed_only else Slot(arg.type_list_attr, index)
                ports.append(Port(dtype, slot, arg.is_ref))
                if slot:
                    slots[slot] = dtype
            continue
        if arg.type_attr:
            dtype = values[arg.type_attr]
            slot = None if fixed_only else Slot(arg.type_attr)
        else:
            dtype, slot = arg.fixed, None
        count = values[arg.number_attr] if arg.number_attr else 1
        ports.extend([Port(dtype, slot, arg.is_ref)] * count)
        if slot and count:
            slots[slot] = dtype
    return tuple(ports)


@lru_cache(maxsize=None)
def _cpu_kernel_constraints(op_type):
    """[{attr: allowed dtypes}] for every kernel that runs on CPU (DEFAULT kernels run on any device)."""
    found = []
    for kernel in kernels.get_registered_kernels_for_op(op_type).kernel:
        if kernel.device_type in ("CPU", "DEFAULT") and not kernel.label:
            found.append({c.name: frozenset(c.allowed_values.list.type) for c in kernel.constraint})
    return tuple(found)


@lru_cache(maxsize=None)
def has_cpu_kernel(op_type, attr_dtypes):
    """Does TensorFlow have a CPU kernel for op_type when its type attributes take `attr_dtypes`?

    attr_dtypes: tuple of (attr name, dtype or tuple of dtypes for list attributes), sorted.
    """
    for constraints in _cpu_kernel_constraints(op_type):
        if all(_allowed(constraints.get(name), value) for name, value in attr_dtypes):
            return True
    return False


def _allowed(allowed, value):
    if not allowed:
        return True
    if isinstance(value, tuple):
        return all(v in allowed for v in value)
    return value in allowed
