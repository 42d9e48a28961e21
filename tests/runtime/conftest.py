"""Shared helpers for the runtime tests: NpuOptimizer ConfigProtos and a fresh default graph per test."""
import pytest
import tensorflow as tf

import npu_bridge
from npu_test_support import observe, set_parameters  # noqa: F401  (observe: a fixture)

npu_bridge.activate()


def npu_config(precision_mode_v2="mixed_float16", **parameters):
    """A ConfigProto the way Ascend scripts write it; `parameters` go to parameter_map by Python type."""
    config = tf.compat.v1.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = parameters.pop("use_off_line", True)
    if precision_mode_v2 is not None:
        custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes(precision_mode_v2)
    set_parameters(custom_op, **parameters)
    return config


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g
