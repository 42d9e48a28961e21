"""The overflow rule: which op outputs count as an overflow, as the NPU's overflow detection counts them.

Ascend's `aicore_overflow` check flags an op whose inputs are normal but whose output holds abnormal values
(Inf/NaN, or float16 values at the top of its range such as 65504). msaccucmp's `-overflow_detection` flags a
float16 tensor whose max |x| reaches 65504. One rule here serves dump_debug (npu_bridge.debug.detector) and the
comparison tools: a tensor is abnormal when it holds Inf/NaN, or is float16 with some |x| >= 65504 (what a
saturating 910 clamps an overflow to); an op overflowed when some output is abnormal and no input is.
"""
import numpy as np

FLOAT16_MAX = 65504.0


def is_float(value):
    """Does the array hold floating-point values (float16/32/64, bfloat16)?"""
    dtype = np.asarray(value).dtype
    return dtype.kind == "f" or dtype.name == "bfloat16"


def abnormal(value):
    """Does this output hold Inf/NaN, or (float16) a value with |x| >= 65504?"""
    if not is_float(value):
        return False
    array = np.asarray(value)
    if array.size == 0:
        return False
    if array.dtype == np.float16:
        return bool(np.any(~(np.abs(array) < FLOAT16_MAX)))     # NaN compares False: counted as abnormal
    return not bool(np.all(np.isfinite(array.astype(np.float32) if array.dtype.name == "bfloat16" else array)))


def overflowed(inputs, outputs):
    """The rule: some output abnormal while no input was. Arguments are sequences of arrays.

    An input already at float16's limit or beyond (a value saturated to 65504 upstream) is not normal either:
    the op reading it inherits the overflow, it did not cause it.
    """
    return any(abnormal(v) for v in outputs) and not any(abnormal(v) for v in inputs)
