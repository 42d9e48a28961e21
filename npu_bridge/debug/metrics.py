"""msaccucmp's comparison metrics, and the per-dtype threshold for an op's own (local) error.

The formulas are those of Ascend's Model Accuracy Analyzer (msaccucmp's built-in algorithms), so a CSV written
here reads like the one hardware users know: `my` is the emulated NPU tensor, `golden` the float32 ground truth.
Relative errors count golden elements with |golden| <= ZERO (float64's epsilon) as 0, as msaccucmp does, instead
of dividing by zero; a scalar's cosine similarity is 1, as msaccucmp sets it.
"""
import numpy as np

ZERO = float(np.finfo(np.float64).eps)      # |golden| at or below this adds 0 to relative errors (msaccucmp's)
KL_EPSILON = float(np.finfo(np.float32).eps)     # floor of each normalized element before the KL divergence

# Column names of msaccucmp's algorithms, in its order.
ALGORITHMS = ("CosineSimilarity", "MaxAbsoluteError", "AccumulatedRelativeError", "RelativeEuclideanDistance",
              "KullbackLeiblerDivergence", "StandardDeviation", "MeanAbsoluteError", "RootMeanSquareError",
              "MaxRelativeError", "MeanRelativeError")

# An op's local error is its reduced computation, fed float32 ground-truth inputs, against float32: the largest
# absolute difference relative to the largest |value| of the float32 output (so cancellation near zero does
# not count as error). One op rounds its inputs and its output, each within the unit roundoff u (2^-11 for
# float16, 2^-8 for bfloat16); four roundoffs is what an elementwise op can reach on its own. msprobe's
# free_benchmark uses 0.002 for float16, the same 4u; for bfloat16 it uses 0.004, about 1u, which flags plain
# rounding of every bfloat16 op, so 4u is used for both.
LOCAL_THRESHOLDS = {"float16": 4 * 2.0 ** -11, "bfloat16": 4 * 2.0 ** -8, "float32": 4 * 2.0 ** -24}


def as_float64(array):
    """The values as float64 (bfloat16 / float16 / float32 alike), for metrics that must not round again."""
    return np.asarray(array).astype(np.float64)


def _finite(array):
    return bool(np.all(np.isfinite(array)))


def cosine_similarity(my, golden):
    norm_my, norm_golden = np.linalg.norm(my), np.linalg.norm(golden)
    if norm_my <= ZERO and norm_golden <= ZERO:
        return 1.0
    if norm_my <= ZERO or norm_golden <= ZERO:
        return float("nan")
    return float(min(1.0, np.dot(my.ravel(), golden.ravel()) / (norm_my * norm_golden)))


def _relative(my, golden):
    """|my / golden - 1| per element, 0 where |golden| <= ZERO (msaccucmp's np.where)."""
    mask = np.abs(golden) > ZERO
    relative = np.zeros(golden.shape)
    relative[mask] = np.abs(my[mask] / golden[mask] - 1.0)
    return relative


def kullback_leibler(my, golden):
    """msaccucmp's KL divergence: each side scaled to [0, 1] by its min and max (left as it is when constant),
    floored at float32's epsilon and normalized to sum 1, then sum(p_my * log(p_my / p_golden))."""
    def distribution(values):
        low, high = values.min(), values.max()
        scaled = (values - low) / (high - low) if high > low else values
        scaled = np.maximum(scaled, KL_EPSILON)
        return scaled / scaled.sum()

    p, q = distribution(my.ravel()), distribution(golden.ravel())
    return float(np.sum(p * np.log(p / q)))


def compare_arrays(my, golden):
    """{algorithm: value} for one tensor pair (floats; StandardDeviation is msaccucmp's "(mean;std),(mean;std)").

    With Inf/NaN on either side only what stays meaningful is computed; the rest is NaN, and `reason` in the
    result says why, as msaccucmp's CompareFailReason does.
    """
    my, golden = as_float64(my), as_float64(golden)
    result = {name: float("nan") for name in ALGORITHMS}
    result["reason"] = ""
    if my.shape != golden.shape:
        result["reason"] = f"shape {my.shape} differs from the ground truth's {golden.shape}"
        return result
    if my.size == 0:
        result["reason"] = "empty tensor"
        return result
    with np.errstate(invalid="ignore", over="ignore"):
        result["StandardDeviation"] = (f"({np.mean(my):.6g};{np.std(my):.6g}),({np.mean(golden):.6g};"
                                       f"{np.std(golden):.6g})")
    if not (_finite(my) and _finite(golden)):
        side = "the NPU tensor" if not _finite(my) else "the ground truth"
        result["reason"] = f"{side} holds Inf or NaN"
        return result
    diff = np.abs(my - golden)
    relative = _relative(my, golden)
    golden_energy = float(np.sum(golden ** 2))
    result.update({
        "CosineSimilarity": 1.0 if all(d == 1 for d in my.shape) else cosine_similarity(my, golden),
        "MaxAbsoluteError": float(diff.max()),
        "AccumulatedRelativeError": float(relative.sum()),
        "RelativeEuclideanDistance": float(np.sqrt(np.sum(diff ** 2) / golden_energy)) if golden_energy > 0
        else (0.0 if not diff.any() else float("inf")),
        "KullbackLeiblerDivergence": kullback_leibler(my, golden),
        "MeanAbsoluteError": float(diff.mean()),
        "RootMeanSquareError": float(np.sqrt(np.mean(diff ** 2))),
        "MaxRelativeError": float(relative.max()),
        "MeanRelativeError": float(relative.mean()),
    })
    return result


def statistics(array):
    """Max, Min, Mean and Norm (L2) of a tensor, as msprobe's graph nodes show each input and output."""
    values = as_float64(array)
    if values.size == 0:
        return {"Max": float("nan"), "Min": float("nan"), "Mean": float("nan"), "Norm": 0.0}
    with np.errstate(invalid="ignore", over="ignore"):
        return {"Max": float(values.max()), "Min": float(values.min()), "Mean": float(values.mean()),
                "Norm": float(np.linalg.norm(values.ravel()))}


def local_error(my, golden):
    """max |my - golden| / max |golden|: an op's own error at the scale of its output (inf when my is not finite)."""
    my, golden = as_float64(my), as_float64(golden)
    if my.size == 0:
        return 0.0
    if not _finite(my):
        return float("inf")
    scale = float(np.max(np.abs(golden)))
    diff = float(np.max(np.abs(my - golden)))
    if scale <= ZERO:
        return 0.0 if diff <= ZERO else float("inf")
    return diff / scale
