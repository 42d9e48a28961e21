"""Which sessions run emulated: only those whose ConfigProto holds NpuOptimizer with use_off_line true."""
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import npu_bridge.runtime
from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning
from npu_bridge.runtime import last_report

from npu_test_support import fp16

from .conftest import npu_config

# 1/3 is not representable in float16: a float32 matmul of it differs visibly from a float16 one.
X = np.full((2, 4), 1 / 3, np.float32)
W = np.full((4, 3), 1 / 3, np.float32)


def _matmul():
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    return x, tf.matmul(x, tf.constant(W), name="y")


def _emulated(sess):
    return sess._npu_emulation is not None


def test_npu_session_computes_matmul_in_float16_and_returns_float32(graph):
    x, y = _matmul()
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        value = sess.run(y, {x: X})
    assert _emulated(sess)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, fp16(fp16(X) @ fp16(W)))
    assert not np.allclose(value, X @ W, rtol=0, atol=1e-6)


def test_plain_session_is_untouched(graph):
    x, y = _matmul()
    with tf.compat.v1.Session() as sess:
        value = sess.run(y, {x: X})
    assert not _emulated(sess)
    np.testing.assert_allclose(value, X @ W, rtol=1e-6)


def test_use_off_line_false_runs_plain_tensorflow(graph):
    x, y = _matmul()
    with tf.compat.v1.Session(config=npu_config("mixed_float16", use_off_line=False)) as sess:
        value = sess.run(y, {x: X})
    assert not _emulated(sess)
    np.testing.assert_allclose(value, X @ W, rtol=1e-6)


def test_other_custom_optimizer_name_is_not_the_npu(graph):
    x, y = _matmul()
    config = npu_config("mixed_float16")
    config.graph_options.rewrite_options.custom_optimizers[0].name = "npuoptimizer"
    with pytest.warns(NpuConfigWarning, match="NpuOptimizer"), tf.compat.v1.Session(config=config) as sess:
        np.testing.assert_allclose(sess.run(y, {x: X}), X @ W, rtol=1e-6)
    assert not _emulated(sess)


def test_interactive_session_is_emulated(graph):
    x, y = _matmul()
    sess = tf.compat.v1.InteractiveSession(config=npu_config("mixed_float16"))
    try:
        np.testing.assert_array_equal(y.eval({x: X}), fp16(fp16(X) @ fp16(W)))
    finally:
        sess.close()
    assert _emulated(sess)


def test_config_errors_surface_when_the_session_is_created(graph):
    _matmul()
    with pytest.raises(NpuConfigError, match="precision_mode_v2"):
        tf.compat.v1.Session(config=npu_config("mixed_float32"))


def test_activate_is_idempotent(graph):
    run = tf.compat.v1.Session.run
    npu_bridge.runtime.activate()
    npu_bridge.runtime.activate()
    assert tf.compat.v1.Session.run is run


def test_last_report_of_a_plain_session_says_why_there_is_none(graph):
    _matmul()
    with tf.compat.v1.Session() as sess, pytest.raises(ValueError, match="NpuOptimizer"):
        last_report(sess)


def test_last_report_names_the_mode_and_the_reduced_matmul(graph):
    x, y = _matmul()
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        sess.run(y, {x: X})
        report = last_report(sess)
    assert "mixed_float16" in report.summary()
    assert report.by_name("y").decision == "float16"


def test_importing_any_npu_bridge_module_activates_the_emulation():
    script = (
        "import numpy as np, tensorflow as tf\n"
        "tf.compat.v1.disable_v2_behavior()\n"
        "import npu_bridge.core.errors\n"
        "from tensorflow.python.client import session\n"
        "print(session.BaseSession.run.__module__)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "npu_bridge.runtime.activation"
