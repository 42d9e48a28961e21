"""Run observers: tools see each program and each step (a run, or one loop iteration) with extra fetches."""
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.runtime import observers

from .conftest import npu_config


class Recorder(observers.RunObserver):
    def __init__(self, extra=()):
        self.extra = extra
        self.programs = []
        self.steps = []

    def program_ready(self, emulation, program):
        self.programs.append(program.result.report.n_ops)

    def before_step(self, emulation, plan, step):
        tensor_map = plan.program.result.tensor_map
        return [tensor_map[name].name if name in tensor_map else name for name in self.extra]

    def after_step(self, record):
        self.steps.append((record.plan.signature, record.step, list(record.results), dict(record.extra)))


@pytest.fixture
def recorder(observe):
    return lambda extra=(): observe(Recorder(extra))


def test_steps_are_numbered_per_signature_and_extras_come_back(graph, recorder):
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    y = tf.matmul(x, x, name="y")
    z = tf.nn.relu(y, name="z")
    seen = recorder(extra=("y:0",))
    with tf.compat.v1.Session(config=npu_config()) as sess:
        value = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
        for _ in range(3):
            fetched = sess.run(z, {x: value})
        sess.run(y, {x: value})
    np.testing.assert_allclose(fetched, value @ value)
    assert seen.programs and seen.programs[0] > 0
    assert [step for _, step, _, _ in seen.steps] == [0, 1, 2, 0]
    assert len({signature for signature, _, _, _ in seen.steps}) == 2
    # y is reduced to float16 by the white MatMul: the tensor map names the inner tensor the NPU holds it in.
    (extra,) = seen.steps[0][3].values()
    assert extra.dtype == np.float16 and np.array_equal(extra, (value @ value).astype(np.float16))


def test_one_loop_iteration_is_one_step(graph, recorder):
    counter = tf.compat.v1.get_variable("counter", [], tf.float32, tf.zeros_initializer())
    step = tf.compat.v1.assign_add(counter, 1.0, name="step")
    step.op._set_attr("_npu_iterations_per_loop", attr_value_pb2.AttrValue(i=3))
    seen = recorder()
    with tf.compat.v1.Session(config=npu_config(iterations_per_loop=3)) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(step.op)
        assert sess.run(counter) == 3.0
    loop_steps = [s for signature, s, _, _ in seen.steps if signature[1] == ("step",)]
    assert loop_steps == [0, 1, 2]


def test_a_removed_observer_sees_nothing_more(graph, recorder):
    x = tf.constant([1.0, 2.0], name="x")
    y = tf.identity(x * 2.0, name="y")
    seen = recorder()
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(y)
        observers.remove_observer(seen)
        sess.run(y)
    assert len(seen.steps) == 1


def test_a_fetched_variable_keeps_its_value_when_observers_step_the_run(graph, recorder):
    """The C++ callable hands back a ref variable's buffer; the stepped path copies it as the direct one does."""
    recorder()
    w = tf.compat.v1.get_variable("w", initializer=np.ones((2,), np.float32))
    update = tf.compat.v1.assign_add(w, np.ones((2,), np.float32))
    with tf.compat.v1.Session(config=npu_config()) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        before = sess.run(w)
        sess.run(update)
    np.testing.assert_array_equal(before, [1.0, 1.0])
