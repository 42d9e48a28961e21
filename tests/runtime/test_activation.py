"""Which sessions run emulated: only those whose ConfigProto holds NpuOptimizer with use_off_line true."""
import os
import pathlib
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

TESTS = pathlib.Path(__file__).resolve().parents[1]
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


def test_activate_is_idempotent_and_keeps_tensorflow_s_own_methods(graph):
    from npu_bridge.runtime import activation

    run = tf.compat.v1.Session.run
    npu_bridge.runtime.activate()
    npu_bridge.runtime.activate()
    assert tf.compat.v1.Session.run is run
    assert run.__module__ == "npu_bridge.runtime.activation"
    assert all(original.__module__ == "tensorflow.python.client.session"
               for original in activation._originals.values())


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


def _session_methods_after(code):
    """In a fresh interpreter: run `code`, then print the module of each BaseSession method activation patches."""
    script = ("import tensorflow as tf\n"
              "tf.compat.v1.disable_v2_behavior()\n"
              f"{code}\n"
              "from tensorflow.python.client import session\n"
              "from npu_bridge.runtime.activation import _PATCHED\n"
              "print(sorted({session.BaseSession.__dict__[name].__module__ for name in _PATCHED}))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


TENSORFLOW_S_OWN = "['tensorflow.python.client.session']"
PATCHED = "['npu_bridge.runtime.activation']"


@pytest.mark.parametrize("face", [
    "import npu_bridge",
    "from npu_bridge.npu_init import *",
    "from npu_bridge.estimator import npu_ops",
    "from npu_bridge.estimator.npu.npu_config import NPURunConfig",
    "from npu_bridge.hccl import hccl_ops",
    "from hccl.manage.api import get_rank_size",
    "from npu_bridge.npu_cpu import npu_cpu_ops",
    "from npu_bridge.tbe import npu_vector_ops",
    "from npu_bridge.helper import helper",
    "from npu_bridge import tf_adapter",
])
def test_the_public_faces_scripts_import_activate_the_emulation(face):
    assert _session_methods_after(face) == PATCHED


def test_the_core_the_report_cli_and_the_debug_library_patch_nothing():
    offline = ("import npu_bridge.core.precision, npu_bridge.core.options, npu_bridge.report_cli, npu_bridge.debug, "
               "npu_bridge.artifacts, npu_bridge.runtime, npu_bridge.launcher")
    assert _session_methods_after(offline) == TENSORFLOW_S_OWN


def test_deactivate_restores_tensorflow_s_own_methods_and_emulation_is_a_block():
    """Outside the block every session is TensorFlow's own (the very functions TensorFlow defines); inside it an
    NpuOptimizer session is emulated; deactivate() refuses while an emulated session is open."""
    code = """
import numpy as np
import npu_bridge.core.options, npu_bridge.runtime.activation as activation
import npu_bridge      # already imported by the line above, which activated nothing
from tensorflow.python.client import session
from npu_test_support import npu_config
own = {name: session.BaseSession.__dict__[name] for name in activation._PATCHED}
x = tf.compat.v1.placeholder(tf.float32, [2, 2])
y = tf.matmul(x, x)
feed = {x: np.full((2, 2), 1 / 3, np.float32)}
with npu_bridge.emulation():
    sess = tf.compat.v1.Session(config=npu_config(precision_mode="allow_mix_precision"))
    emulated = sess.run(y, feed)
    try:
        npu_bridge.deactivate()
    except RuntimeError as error:
        print("refused:", "still open" in str(error))
    sess.close()
assert all(session.BaseSession.__dict__[name] is own[name] for name in own), "not restored"
assert not hasattr(session.BaseSession, "_npu_emulation")
with tf.compat.v1.Session(config=npu_config(precision_mode="allow_mix_precision")) as plain:
    print("plain after the block:", plain.run(y, feed).tolist() != emulated.tolist())
npu_bridge.activate()
npu_bridge.deactivate()
npu_bridge.deactivate()
assert all(session.BaseSession.__dict__[name] is own[name] for name in own), "not restored twice"
"""
    script = "import tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n" + code
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert "refused: True" in out.stdout and "plain after the block: True" in out.stdout


def test_a_plain_session_is_tensorflow_s_own_byte_for_byte():
    """With the emulation on, a session without NpuOptimizer (no multi-rank job) keeps the user's GraphDef as it
    is, executes the very partition graphs TensorFlow executes with the emulation off, returns the same bits, and
    its run goes through no npu_bridge code but the one frame that hands it to TensorFlow's own run (nor does a
    failed run: no job placed it, so no job explains its errors)."""
    code = """
import sys
import numpy as np
import npu_bridge
from tensorflow.python.client import session

def plain_run(profile):
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(7)
        x = tf.compat.v1.placeholder(tf.float32, [3, 4], name="x")
        w = tf.compat.v1.get_variable("w", [4, 2])
        y = tf.nn.softmax(tf.matmul(x, w) + tf.random.normal([3, 2]), name="y")
        init = tf.compat.v1.global_variables_initializer()
        before = graph.as_graph_def().SerializeToString(deterministic=True)
        feed = {x: np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)}
        options = tf.compat.v1.RunOptions(output_partition_graphs=True)
        metadata = tf.compat.v1.RunMetadata()
        with tf.compat.v1.Session() as sess:
            sess.run(init)
            called = []
            if profile:
                sys.setprofile(lambda frame, event, arg: event == "call" and called.append(
                    f"{frame.f_code.co_filename.rpartition('npu_bridge')[2]}:{frame.f_code.co_name}"
                    if "npu_bridge" in frame.f_code.co_filename else None))
            value = sess.run(y, feed, options=options, run_metadata=metadata)
            sys.setprofile(None)
            kept = sess.graph_def.SerializeToString(deterministic=True) == before
            if profile:
                print("placed in a job:", sess._npu_in_job)
    partitions = [g.SerializeToString(deterministic=True) for g in metadata.partition_graphs]
    return value.tobytes(), partitions, kept, sorted({name for name in called if name})

npu_bridge.activate()
assert session.BaseSession.run.__module__ == "npu_bridge.runtime.activation"
on = plain_run(profile=True)
npu_bridge.deactivate()
off = plain_run(profile=False)
print("kept:", on[2])
print("same bits:", on[0] == off[0])
print("same partition graphs:", on[1] == off[1] and len(on[1]) > 0)
print("npu_bridge code in run:", on[3])
"""
    script = "import tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n" + code
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "kept: True" in out.stdout and "placed in a job: False" in out.stdout
    assert "same bits: True" in out.stdout and "same partition graphs: True" in out.stdout
    assert "npu_bridge code in run: ['/runtime/activation.py:_run']" in out.stdout, out.stdout
