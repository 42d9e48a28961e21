"""Helpers several test folders share: filling an NpuOptimizer parameter_map, float16 rounding in numpy, the
INF/NaN-mode fixture of the suites that pin where the pass puts Casts, and run observers registered for a test."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core import soc
from npu_bridge.core.oplib import BUILTIN_ROOT


def set_parameters(custom_op, **parameters):
    """Write `parameters` into custom_op.parameter_map the way Ascend scripts do: bool .b, int .i, str .s."""
    for key, value in parameters.items():
        if isinstance(value, bool):
            custom_op.parameter_map[key].b = value
        elif isinstance(value, int):
            custom_op.parameter_map[key].i = value
        else:
            custom_op.parameter_map[key].s = tf.compat.as_bytes(value)


def fp16(values):
    """`values` rounded through float16 and back, as the NPU returns a float32 tensor computed in float16."""
    return np.asarray(values, np.float32).astype(np.float16).astype(np.float32)


def npu_config(**parameters):
    """A ConfigProto with an "NpuOptimizer" custom optimizer holding exactly `parameters` (see set_parameters)."""
    config = tf.compat.v1.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    set_parameters(custom_op, **parameters)
    return config


@pytest.fixture(autouse=True)
def inf_nan_mode():
    """The device in INF/NaN mode for each test of a folder whose conftest imports this: no float16 output is
    clamped, so Cast placement is all there is. Saturation mode (the ascend910 default) has its own tests in
    tests/runtime/test_saturation.py."""
    soc.set_device_saturation(False)
    yield
    soc.set_device_saturation(None)


@pytest.fixture
def observe():
    """`observe(observer)` registers a run observer for this test and returns it; all are removed afterwards."""
    from npu_bridge.runtime import observers

    added = []

    def add(observer):
        observers.add_observer(observer)
        added.append(observer)
        return observer

    yield add
    for observer in added:
        observers.remove_observer(observer)


def opp_root_with_add_black(tmp_path):
    """An ASCEND_OPP_PATH root holding a copy of the built-in ascend910 library in which Add is black, so a test
    can tell which library a rewrite read."""
    folder = Path("built-in", "op_impl", "ai_core", "tbe", "config", "ascend910")
    shutil.copytree(BUILTIN_ROOT / folder, tmp_path / "opp" / folder)
    library_file = tmp_path / "opp" / folder / "aic-ascend910-ops-info.json"
    data = json.loads(library_file.read_text())
    data["Add"]["precision_reduce"] = {"flag": "false"}
    library_file.write_text(json.dumps(data))
    return str(tmp_path / "opp")
