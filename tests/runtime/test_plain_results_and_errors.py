"""Results and errors read as plain TensorFlow's: the same Python types, the same exception chain."""
import traceback

import numpy as np
import pytest
import tensorflow as tf

from .conftest import npu_config

v1 = tf.compat.v1


def test_scalar_variable_fetches_are_numpy_scalars_as_in_a_plain_session():
    """A plain Session.run returns a 0-d variable value as a NumPy scalar (Estimator.evaluate's global_step prints
    1000, not array(1000)); the copy the emulation makes of variable values must keep that."""
    def fetched(config):
        with tf.Graph().as_default():
            step = v1.train.get_or_create_global_step()
            scale = v1.Variable(2.0, name="scale")
            matrix = v1.Variable(np.ones((2, 2), np.float32), name="matrix")
            with v1.Session(config=config) as sess:
                sess.run(v1.global_variables_initializer())
                return sess.run([step, scale, scale.value(), matrix])
    plain, emulated = fetched(None), fetched(npu_config())
    assert [type(value) for value in emulated] == [type(value) for value in plain]
    assert [repr(value) for value in emulated] == [repr(value) for value in plain]


def _failure_text(config, build):
    with tf.Graph().as_default():
        fetch, feed = build()
        with v1.Session(config=config) as sess:
            with pytest.raises(tf.errors.OpError) as caught:
                sess.run(fetch, feed)
    return "".join(traceback.format_exception(caught.type, caught.value, caught.tb))


def _messages(text):
    """The exception lines of a printed chain (frames and source lines dropped)."""
    return [line for line in text.splitlines() if line and not line.startswith(" ")]


def _uninitialized():
    v1.Variable(1.0)
    return v1.Variable(2.0) * 3.0, None


def _nan_behind_a_cast():
    x = v1.placeholder(tf.float32, [1, 2], name="x")
    checked = tf.debugging.check_numerics(tf.matmul(x, tf.ones([2, 1]), name="y"), "y is not finite", name="check_y")
    return checked, {x: [[np.nan, 1.0]]}


@pytest.mark.parametrize("build", [_uninitialized, _nan_behind_a_cast])
def test_a_run_time_error_prints_the_chain_plain_tensorflow_prints(build):
    plain = _failure_text(None, build)
    emulated = _failure_text(npu_config(), build)
    assert "NpuBridge" not in emulated
    first = _messages(plain)[1]
    assert first == _messages(emulated)[1] and first.startswith("tensorflow.python.framework.errors_impl.")
    assert "During handling of the above exception, another exception occurred:" in emulated
    if build is _uninitialized:
        assert first.endswith("FailedPreconditionError: Attempting to use uninitialized value Variable_1")
        assert _messages(emulated) == _messages(plain)
