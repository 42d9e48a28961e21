"""The precision tests pin where the pass puts Casts and what it maps: they run in INF/NaN mode, where no float16
output is clamped. Saturation mode (the ascend910 default) has its own tests in test_saturation.py."""
import pytest

from npu_bridge.core import soc


@pytest.fixture(autouse=True)
def inf_nan_mode():
    soc.set_device_saturation(False)
    yield
    soc.set_device_saturation(None)
