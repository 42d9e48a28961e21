"""Bad RANK_* settings refuse the NpuOptimizer session with a clear NpuConfigError, and nothing else: a plain
tf.compat.v1.Session() in the same process runs as TensorFlow's own (local target, its own errors)."""
import contextlib
import socket

import numpy as np
import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.distributed.rank_table import rank_table_json
from npu_test_support import npu_config

npu_bridge.activate()
v1 = tf.compat.v1
X = np.full((2, 2), 1 / 3, np.float32)


@contextlib.contextmanager
def _port_in_use(job_env):
    """Rank 2's port (HCCL_IF_BASE_PORT + 2) held by another socket."""
    holder = socket.socket()
    holder.bind(("", 0))
    holder.listen()
    try:
        job_env.setenv("HCCL_IF_BASE_PORT", str(holder.getsockname()[1] - 2))
        yield
    finally:
        holder.close()


def _one_rank_table(job_env, tmp_path):
    path = tmp_path / "one_rank.json"
    path.write_text(rank_table_json(1))
    job_env.setenv("RANK_TABLE_FILE", str(path))
    job_env.setenv("RANK_SIZE", "2")
    job_env.setenv("RANK_ID", "0")


BAD_SETTINGS = {
    "a table listing 1 rank for RANK_SIZE=2": (_one_rank_table, "RANK_SIZE=2 but rank table .* lists 1 ranks"),
    "RANK_ID='abc'": (lambda env, _: env.setenv("RANK_ID", "abc"), "RANK_ID='abc' is not an integer"),
    "RANK_ID beyond the table": (lambda env, _: env.setenv("RANK_ID", "7"), "RANK_ID=7 does not exist"),
    "no RANK_TABLE_FILE": (lambda env, _: env.delenv("RANK_TABLE_FILE"), "RANK_TABLE_FILE is not set"),
    "RANK_SIZE='two'": (lambda env, _: env.setenv("RANK_SIZE", "two"), "RANK_SIZE='two' is not an integer"),
    "DEVICE_ID of another rank": (lambda env, _: env.setenv("DEVICE_ID", "5"), "inconsistent with the local devId"),
    "a port in use": (None, "port .* is already in use"),
}


@pytest.fixture(params=list(BAD_SETTINGS))
def bad_setting(request, job_env, tmp_path):
    """The environment of rank 2 of a four-rank job, made bad in one way; yields the NPU session's message."""
    apply, message = BAD_SETTINGS[request.param]
    if apply is None:
        with _port_in_use(job_env):
            yield message
    else:
        apply(job_env, tmp_path)
        yield message


def _matmul():
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    return x, tf.matmul(x, x, name="y")


def test_a_plain_session_runs_as_plain_tensorflow(bad_setting):
    with tf.Graph().as_default():
        x, y = _matmul()
        with v1.Session() as sess:
            value = sess.run(y, {x: X})
        assert sess.sess_str in ("", b"") and sess._npu_emulation is None
        np.testing.assert_allclose(value, X @ X, rtol=1e-6)


def test_a_failing_plain_run_raises_tensorflow_s_own_error(bad_setting):
    with tf.Graph().as_default():
        variable = v1.get_variable("v", [2])
        with v1.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run(variable)


def test_the_npu_session_gets_the_clear_error(bad_setting):
    with tf.Graph().as_default():
        _matmul()
        with pytest.raises(NpuConfigError, match=bad_setting):
            v1.Session(config=npu_config(precision_mode="allow_mix_precision"))
