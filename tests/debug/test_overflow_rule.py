"""The overflow rule shared by overflow detection and the comparison tools."""
import ml_dtypes
import numpy as np

from npu_bridge.debug.overflow import FLOAT16_MAX, abnormal, overflowed


def test_float16_at_its_largest_value_counts_as_overflow():
    assert FLOAT16_MAX == 65504.0
    assert abnormal(np.array([1.0, -65504.0], np.float16))
    assert not abnormal(np.array([1.0, 65472.0], np.float16))      # the next float16 below 65504
    assert not abnormal(np.array([1.0e6], np.float32))              # only float16 has the range rule


def test_inf_and_nan_count_in_every_float_dtype_and_ints_never():
    for dtype in (np.float32, np.float64, ml_dtypes.bfloat16):
        assert abnormal(np.array([0.0, np.inf], dtype)) and abnormal(np.array([np.nan], dtype))
    assert not abnormal(np.array([2 ** 31 - 1], np.int32))
    assert not abnormal(np.zeros((0,), np.float16))


def test_an_op_overflowed_only_when_its_inputs_were_normal():
    big = np.array([300.0], np.float16)
    assert overflowed([big, np.array([1], np.int32)], [np.array([np.inf], np.float16)])
    assert not overflowed([np.array([np.inf], np.float16)], [np.array([np.inf], np.float16)])   # inherited
    saturated = np.array([65504.0], np.float16)
    assert overflowed([big], [saturated]) and not overflowed([saturated], [saturated])
    assert not overflowed([big], [big])
