"""The precision tests pin where the pass puts Casts and what it maps: they run in INF/NaN mode, where no float16 output is
clamped."""
from npu_test_support import inf_nan_mode  # noqa: F401  (an autouse fixture)
