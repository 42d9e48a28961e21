"""What the precision pass's output promises everyone who reads it: the runtime, the debug tools, the artifacts.

The pass (npu_bridge.core.precision) rewrites a GraphDef; the runtime runs the result, the debug tools find the
pass's nodes in it to dump and compare them, error messages map them back to user ops. Every name, attribute
and value those readers rely on is defined here once, so a change to the pass's output is a change to this file
and every reader follows. This module imports only the standard library: the report CLI and the launcher read it
before TensorFlow loads.
"""
import enum
import re

# The attribute on every node the pass added, retyped or emulated; its value says which (bytes, as in a NodeDef).
MARKER = "_npu_bridge"
MARKER_OUT = "_npu_bridge_out"          # list(type): the logical output dtypes of an emulated node
MARK_CAST = b"cast"                     # a Cast the pass added
MARK_RETYPED = b"retyped"               # a node retyped in place (a user Cast whose destination type changed too)
MARK_EMULATED = b"emulated"             # a node computed in float32 between the pass's Casts
MARK_SATURATION = b"saturation"         # a node of saturation mode's clamps or of its overflow flag

# Every node the pass or the runtime adds has a name ending so; user nodes never do.
NAME_SUFFIX = "-NpuBridge"
# The Casts the pass adds: `<src>-<port>-CastToFp16-NpuBridge` (by destination dtype name).
CAST_SUFFIXES = {"float16": "CastToFp16", "bfloat16": "CastToBf16", "float32": "CastToFp32"}
# Saturation mode's clamp of one output: its last node (what every reader reads) and, for a float16 output, its
# first node (the upper bound); both are named after the clamped tensor `<src>-<port>`.
SATURATION_SUFFIX = "-SatFp16-NpuBridge"
SATURATION_UPPER_SUFFIX = "-SatFp16Upper-NpuBridge"
CLAMP_OPS = ("ClipByValue", "Minimum", "Maximum")      # the op types a clamp is made of
# The runtime's Cast of a fetched reduced tensor back to the dtype the user graph gives it.
FETCH_CAST_SUFFIX = "-NpuBridgeFetch"

# NPULossScaleOptimizer marks with it the Identity standing for the NPU's float status register (saturation.py).
STATUS_ATTR = "_npu_float_status"
# Set by set_iteration_per_loop / NPUEstimator on the op a run repeats; the runtime repeats it that many times.
ITERATIONS_PER_LOOP_ATTR = "_npu_iterations_per_loop"

# What counts as a variable. Ref variables are read through an Identity (`w/read`), resource variables through a
# ReadVariableOp; both hold the float32 master value the pass never retypes.
REF_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "TemporaryVariable"})
RESOURCE_VARIABLE_OPS = frozenset({"VarHandleOp"})
VARIABLE_OPS = REF_VARIABLE_OPS | RESOURCE_VARIABLE_OPS
# Variables whose value outlives a step (a TemporaryVariable is gone when its step ends).
PERSISTENT_VARIABLE_OPS = VARIABLE_OPS - {"TemporaryVariable"}


class PrecisionMode(enum.Enum):
    """The precision mode a session runs under, whichever of the adapter's spellings chose it."""

    MIXED_FP16 = "mixed_fp16"
    MIXED_BF16 = "mixed_bf16"
    FORCE_FP16 = "force_fp16"
    FORCE_FP32 = "force_fp32"
    KEEP_ORIGIN = "keep_origin"
    ALLOW_FP32_TO_FP16 = "allow_fp32_to_fp16"
    ALLOW_FP32_TO_BF16 = "allow_fp32_to_bf16"


MIXED_MODES = frozenset({PrecisionMode.MIXED_FP16, PrecisionMode.MIXED_BF16})   # the modes whose lists decide


def cast_name(node: str, port: int, dtype_name: str) -> str:
    """The name the pass gives its Cast of output `port` of `node` to `dtype_name` (before uniquifying)."""
    return f"{node}-{port}-{CAST_SUFFIXES[dtype_name]}{NAME_SUFFIX}"


def fetch_cast_name(tensor: str, dtype_name: str) -> str:
    """The name of the runtime's Cast of fetched tensor `tensor` (`op:port`) to `dtype_name`."""
    return f"{tensor.replace(':', '-')}-CastTo{dtype_name}{FETCH_CAST_SUFFIX}"


def is_pass_node(name: str) -> bool:
    """Was node `name` added by the pass (a Cast, a clamp, an overflow flag)?"""
    return name.endswith(NAME_SUFFIX)


def is_clamp(name: str) -> bool:
    """Is node `name` one of saturation mode's clamp nodes?"""
    return name.endswith((SATURATION_SUFFIX, SATURATION_UPPER_SUFFIX))


def clamped_source(name: str) -> str:
    """The tensor a clamp node named `name` reads ("mm-0-SatFp16-NpuBridge" -> "mm"), or `name` itself."""
    if not name.endswith(SATURATION_SUFFIX):
        return name
    node, _, port = name[:-len(SATURATION_SUFFIX)].rpartition("-")
    return node if port == "0" else f"{node}:{port}"


# A Cast or clamp the pass added, or a fetch cast, anywhere in a message: group 1 is the user op it stands for.
_ADDED_NODE = re.compile(r"([^\s'\"{}\[\](),]+?)-\d+-(?:CastTo\w+?|SatFp16(?:Upper)?)-NpuBridge(?:Fetch)?(?![\w-])")


def user_names_in(text: str) -> str:
    """`text` (a node name or a whole message) with every added Cast or clamp replaced by its user op."""
    previous = None
    while previous != text:
        previous, text = text, _ADDED_NODE.sub(r"\1", text)
    return text
