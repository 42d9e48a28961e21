"""Acceptance helpers: sessions configured the way ported ModelZoo scripts configure them."""
import pytest
import tensorflow as tf

from npu_bridge.npu_init import npu_config_proto
from npu_test_support import fp16, set_parameters


def ported_config(precision_mode="allow_mix_precision", **parameters):
    """npu_config_proto() plus the NpuOptimizer parameters a migrated script writes by hand."""
    config = npu_config_proto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers[0]
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(precision_mode)
    set_parameters(custom_op, **parameters)
    return config


def fp16_matmul(a, b):
    """A float32 matmul as the emulated NPU computes it: float16 inputs, float32 accumulation, float16 result."""
    return fp16(fp16(a) @ fp16(b))


def is_emulated(sess):
    """True when `sess` (a tf.compat.v1 session or a MonitoredSession) runs on the emulated NPU."""
    raw = sess if hasattr(sess, "_npu_emulation") else sess._tf_sess()
    return raw._npu_emulation is not None


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g
