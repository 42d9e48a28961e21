"""The precision modes of docs/BEHAVIOUR.md §2-§3, one type attribute at a time.

Each rule returns a SlotDecision: the dtype the attribute's inputs are read in, the dtype its outputs are
produced in, and one sentence naming the rule. Inputs and outputs differ only for cube ops under force_fp32
(cube_fp16in_fp32out): float16 operands, float32 result.
"""
from typing import NamedTuple

from npu_bridge.core.contract import MIXED_MODES, PrecisionMode
from npu_bridge.core.precision.typeattrs import (
    ASCEND_NAMES, DT_BFLOAT16, DT_FLOAT, DT_HALF, REDUCED_DTYPES, dtype_name, has_cpu_kernel,
)

# Follow classes of a producer's output, for gray ops.
NEUTRAL = "neutral"      # graph source (Const, Placeholder, variable read), state or function-call output, non-float
REDUCED = "reduced"
FP32 = "float32"


# Stands for the followed producer's name in a gray op's reason. Gray ops with the same signature, op facts and
# producer classes share one decision, so the name is put in when the report is read (Report rows).
FOLLOWED = "{followed}"


class RuleViolation(ValueError):
    """The configuration asks for something the real engine refuses (kept verbatim in the message)."""

    def __init__(self, rule, detail):
        self.rule = rule
        super().__init__(detail)


class SlotDecision(NamedTuple):
    in_dtype: int
    out_dtype: int
    reason: str
    followed: str = ""     # the producer a gray op followed, for Report.explain


class OpFacts(NamedTuple):
    """What the rules need to know about a node, computed once per node."""

    ir_type: str
    ir_candidates: tuple  # every IR type the TF op may become, preferred first (customize_dtypes matches any)
    list_name: str        # "white" / "black" / "gray"
    list_origin: str      # why it is in that list, e.g. "built-in ascend910 precision_reduce=true"
    cube: bool
    library: object       # the OpLibrary of the PrecisionLists


# Ops whose float16 CPU kernels are scalar Eigen code while their float32 kernels are oneDNN's: oneDNN runs
# float16 only on CPUs with AVX512-FP16. Measured: MaxPoolGrad in float16 took 6x (TF 2.21) to 20x (TF 2.15)
# its float32 time in the small CNN training step (benchmarks/results, small_cnn profile); on TF 2.15 ReluGrad in
# float16 took 42.4 ms against 3.3 ms in float32 per 10 small-CNN steps (Relu likewise ~10x), which kept the
# mixed_float16 step at ~2x plain float32. Computing them in float32 between Casts gives the same values (pooling
# selects or averages, relu selects or clamps: rounding the inputs and the output is what the NPU does).
SLOW_REDUCED_ON_CPU = frozenset({
    "MaxPool", "MaxPoolV2", "MaxPoolGrad", "MaxPoolGradV2", "MaxPool3D", "MaxPool3DGrad",
    "AvgPool", "AvgPoolGrad", "AvgPool3D", "AvgPool3DGrad",
    "Relu", "ReluGrad", "Relu6", "Relu6Grad",
})


# Ops that only select, copy, move or clamp their float inputs: when every float input holds values of the
# reduced dtype, every float output does too, so the Cast rounding such an op's float32 output is the identity
# on values and a float32 consumer may read the raw output instead of Cast(float32)(Cast(reduced)(output)).
# ReluGrad and Relu6Grad select a gradient value or zero. Not here: ops that add, multiply or average (Add,
# BiasAdd, AvgPool, MaxPoolGrad sums overlapping windows).
EXACT_ON_ROUNDED = frozenset({
    "MaxPool", "MaxPoolV2", "MaxPool3D", "Relu", "Relu6", "ReluGrad", "Relu6Grad", "Identity", "Snapshot", "Reshape", "Squeeze",
    "ExpandDims", "Transpose", "Pad", "PadV2", "MirrorPad", "Slice", "StridedSlice", "ConcatV2", "Concat",
    "Pack", "Unpack", "Split", "SplitV", "Tile", "Reverse", "ReverseV2", "Maximum", "Minimum",
    "ClipByValue", "Select", "SelectV2", "Neg", "Abs",
})


def why_between_casts(op_type, cube, attr_dtypes):
    """Why the op should compute in float32 between Casts instead of being retyped in place (None: retype it).

    Cube ops always do: the Ascend cube unit multiplies float16 operands and accumulates in float32, which
    float32 arithmetic on float16-rounded inputs reproduces exactly for the products (11+11 significant bits
    fit in 24), and the CPU's float32 matmul is far faster than its float16 one. Other ops do when TensorFlow
    has no CPU kernel for the new dtypes, or when that kernel is known to be slow (SLOW_REDUCED_ON_CPU).
    attr_dtypes: sorted ((attr, dtype or tuple of dtypes), ...).
    """
    if cube:
        return "cube op"
    reduced = next((d for _, d in attr_dtypes if d in REDUCED_DTYPES), None)
    if op_type in SLOW_REDUCED_ON_CPU and op_type not in _SLOW_KERNELS_UNSURE and reduced is not None:
        return _slow_reason(op_type, reduced)
    if not has_cpu_kernel(op_type, attr_dtypes):
        return f"no CPU kernel for {op_type} in {dtype_name(reduced) if reduced else 'these dtypes'}"
    if op_type in SLOW_REDUCED_ON_CPU:
        return _slow_reason(op_type, reduced)
    return None


# The other slow ops have float16 and bfloat16 CPU kernels in every supported TensorFlow (tested), so their reason
# needs no kernel-registry query, which scans the whole registry (about 0.7 ms per op type, a few percent of a
# small network's first step). These have no float16 CPU kernel: the registry is asked, for the reason's sake.
_SLOW_KERNELS_UNSURE = frozenset({"MaxPool3D", "MaxPool3DGrad", "AvgPool3D", "AvgPool3DGrad"})


def _slow_reason(op_type, reduced):
    return f"TensorFlow's float32 kernel for {op_type} is far faster on CPU than its {dtype_name(reduced)} one"


def _supports(facts, dtype):
    return facts.library.supports(facts.ir_type, ASCEND_NAMES[dtype])


def _same(dtype, reason):
    """Inputs and outputs of the attribute in one dtype (kept or changed)."""
    return SlotDecision(dtype, dtype, reason)


def _allow_rule(facts, dtype, reduced, mode_word):
    """allow_fp32_to_fp16/bf16: cube ops reduce; vector ops keep float32 when the library supports it."""
    rname = dtype_name(reduced)
    if facts.cube:
        if _supports(facts, reduced):
            return _same(reduced, f"{mode_word}: cube op {facts.ir_type} computes in {rname}")
        return _same(dtype, f"{mode_word}: cube op {facts.ir_type} has no {rname} in the op library, stays float32")
    if _supports(facts, DT_FLOAT):
        return _same(dtype, f"{mode_word}: vector op {facts.ir_type} supports float32, keeps it")
    if _supports(facts, reduced):
        return _same(reduced, f"{mode_word}: vector op {facts.ir_type} has no float32 in the op library, "
                              f"runs in {rname}")
    return _same(dtype, f"{mode_word}: {facts.ir_type} declares neither float32 nor {rname}, left as is")


def mixed_rule(facts, dtype, reduced, deciding):
    """Black/white/gray (mixed_float16, mixed_bfloat16).

    White reduces when the library declares the reduced dtype; black keeps float32. Gray decides per type
    attribute from the producers of the inputs bound to it (seen through Identity and non-black Casts):
      - any float32 producer (a black op, or one decided float32) -> float32: an upstream op kept precision on
        purpose, and a gray op must not throw it away; unless the library declares no float32 for the op but
        the reduced dtype: the NPU cannot run it in float32, so it runs reduced behind a Cast
        (docs/BEHAVIOUR.md §3);
      - else any reduced producer -> reduced (a mix of reduced producers and graph sources reduces);
      - else, only graph sources (Const, Placeholder, variable reads, state and function-call outputs, integer
        tensors, and v1 loop back edges, which are not decided yet on the way forward) -> the allow_fp32_to_fp16
        (allow_fp32_to_bf16) rule: float32 where the library supports it.
    deciding: (FP32 or REDUCED, producer name) of the producer that decides under the first two rules (see
    `deciding_producer`), or None. The reason names that producer as FOLLOWED.
    """
    rname = dtype_name(reduced)
    where = f"{facts.list_name} list ({facts.list_origin})"
    if facts.list_name == "black":
        if not _supports(facts, DT_FLOAT):
            declared = ",".join(sorted(facts.library.declared_float_dtypes(facts.ir_type) or ()))
            raise RuleViolation("black list", f"Op {facts.ir_type} is in blacklist but doesn't support it's original "
                                              f"dtype float. Op {facts.ir_type} should not be configured as blacklist "
                                              f"op: the op library declares only {declared} for it ({where})")
        return _same(dtype, f"{where}: stays float32")
    if facts.list_name == "white":
        if _supports(facts, reduced):
            return _same(reduced, f"{where}: computes in {rname}")
        return _same(dtype, f"{where}, but the op library declares no {rname} for it: stays float32")
    if deciding is not None:
        cls, name = deciding
        if cls == FP32:
            if not _supports(facts, DT_FLOAT) and _supports(facts, reduced):
                return SlotDecision(reduced, reduced, f"{where}: producer '{FOLLOWED}' is float32 but the op library "
                                                      f"declares no float32 for {facts.ir_type}: runs in {rname}", name)
            return SlotDecision(dtype, dtype, f"{where}: follows its float32 producer '{FOLLOWED}'", name)
        if _supports(facts, reduced):
            return SlotDecision(reduced, reduced, f"{where}: follows its {rname} producer '{FOLLOWED}'", name)
        return SlotDecision(dtype, dtype, f"{where}: producer '{FOLLOWED}' is {rname} but the op library declares "
                                          f"no {rname} for {facts.ir_type}: stays float32", name)
    fallback = _allow_rule(facts, dtype, reduced, "allow_fp32_to_bf16" if reduced == DT_BFLOAT16
                           else "allow_fp32_to_fp16")
    return fallback._replace(reason=f"{where} with no float producer falls back to {fallback.reason}")


def deciding_producer(producers):
    """The producer a gray op's attribute follows: the first float32 one, else the first reduced one, else None.
    producers: [(follow class, producer name)] of the inputs bound to the attribute."""
    for cls, name in producers:
        if cls == FP32:
            return cls, name
    for cls, name in producers:
        if cls == REDUCED:
            return cls, name
    return None


def slot_rule(mode, facts, dtype, reduced, deciding):
    """The decision for one float type attribute under `mode` (a PrecisionMode).

    Returns None when the attribute is not a candidate under this mode (its dtype is left alone silently).
    """
    if mode in MIXED_MODES:
        if dtype != DT_FLOAT:
            return None
        return mixed_rule(facts, dtype, reduced, deciding)
    if mode in (PrecisionMode.ALLOW_FP32_TO_FP16, PrecisionMode.ALLOW_FP32_TO_BF16):
        if dtype != DT_FLOAT:
            return None
        return _allow_rule(facts, dtype, reduced, mode.value)
    if mode is PrecisionMode.FORCE_FP16:
        if dtype not in (DT_FLOAT, DT_BFLOAT16):
            return None
        if _supports(facts, DT_HALF):
            return _same(DT_HALF, f"force_fp16: {facts.ir_type} supports float16, so it runs in float16")
        return _same(dtype, f"force_fp16: the op library declares no float16 for {facts.ir_type}, left as is")
    if mode is PrecisionMode.FORCE_FP32:
        if facts.cube:
            if _supports(facts, DT_HALF):
                return SlotDecision(DT_HALF, DT_FLOAT, f"force_fp32 (cube_fp16in_fp32out): cube op {facts.ir_type}"
                                                       " takes float16 inputs and produces float32")
            if dtype in REDUCED_DTYPES:
                return _same(DT_FLOAT, f"force_fp32: cube op {facts.ir_type} has no float16 in the op library, "
                                       "runs float32")
            return None
        if dtype not in REDUCED_DTYPES:
            return None
        if _supports(facts, DT_FLOAT):
            return _same(DT_FLOAT, f"force_fp32: vector op {facts.ir_type} was {dtype_name(dtype)} in the graph, "
                                   "raised to float32")
        return _same(dtype, f"force_fp32: the op library declares no float32 for {facts.ir_type}, "
                              f"stays {dtype_name(dtype)}")
    return None
