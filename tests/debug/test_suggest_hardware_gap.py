"""suggest where the NPU itself cannot reach float32: the image's gradient passes a convolution's input gradient
(Conv2DBackpropInputD, float16 only on the Ascend 910). A tolerance tighter than what that float16 leaves makes
the gap the hardware's: suggest names it, and by default judges against float32 widened by it."""
import numpy as np
import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.debug.suggest import Search, SuggestError, Tolerance

from .conftest import SCRIPTS, npu_debug, record_training

npu_bridge.activate()
TIGHT = Tolerance(rtol=1e-7, atol=0.0)
BLOCKER = ("1 reduced ops the NPU has no float32 kernel for (1 Conv2DBackpropInputD) stay float16 whatever the "
           "files say, on the NPU as here: gradients/Conv2D_grad/Conv2DBackpropInput (Conv2DBackpropInputD) "
           "created at ")


@pytest.fixture(scope="module")
def recording():
    """Three Adam steps of an image trained through a convolution, recorded once for the module's searches."""
    def build():
        rng = np.random.RandomState(0)
        image = tf.compat.v1.get_variable("image", initializer=rng.rand(1, 8, 8, 3).astype(np.float32))
        kernel = tf.constant(rng.randn(3, 3, 3, 4).astype(np.float32) * 0.3)
        features = tf.nn.conv2d(image, kernel, strides=[1, 1, 1, 1], padding="SAME")
        loss = tf.reduce_mean(tf.square(features - 0.5), name="loss")
        return tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss), loss, {}
    return record_training(build, 3)


def test_strict_says_metric_steps_best_and_the_ops_without_a_float32_kernel(recording, tmp_path):
    search = Search(recording, TIGHT, str(tmp_path), 200, within_reach=False)
    with pytest.raises(SuggestError) as raised:
        search.run()
    message = str(raised.value)
    assert message.startswith("metric loss:0 over steps 0-2 cannot be brought within the tolerance "
                              "|value - float32| <= 0 + 1e-07 * |float32|: even with all ")
    assert "the best reached is " in message and " ops in float32 (Conv2D, " in message
    assert "Blocking it: " + BLOCKER in message and "test_suggest_hardware_gap.py:" in message
    assert "That gap is the hardware's (without --strict" in message


def test_by_default_the_tolerance_is_widened_by_the_hardware_gap_and_the_convolution_found(recording, tmp_path):
    search = Search(recording, TIGHT, str(tmp_path), 200)
    suggestion = search.run()
    assert [record.ir_type for record in search.hardware] == ["Conv2DBackpropInputD"]
    assert suggestion.blocked == ["Conv2D"], "the forward convolution is float32-capable and matters"
    assert not TIGHT.holds(suggestion.floor, suggestion.float32), "every op that can be in float32 is not enough"
    assert search.tolerance.holds(suggestion.fixed, suggestion.float32)
    assert not search.tolerance.holds(suggestion.mixed, suggestion.float32)
    assert search.tolerance.hardware_gap == [float(np.max(np.abs(f - r)))
                                             for f, r in zip(suggestion.floor, suggestion.float32)]


def test_the_cli_prints_the_gap_and_writes_the_file(tmp_path):
    code, out, err = npu_debug("suggest", "--steps", "3", "--no-verify", "--rtol", "1e-7", "--atol", "0", "--output",
                               tmp_path / "out", SCRIPTS / "conv_input_gradient.py", cwd=tmp_path)
    assert code == 0, err[-3000:]
    assert "outside the tolerance even so: " + BLOCKER in out
    assert "conv_input_gradient.py:11: train_op = tf.train.AdamOptimizer(0.1).minimize(loss)" in out
    assert "+ the NPU's own gap of that step (--strict: float32 alone)" in out
    assert "keep in float32 (1): Conv2D\n" in out
    lines = {line.split("[")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert "OUTSIDE tolerance" in lines["as configured"] and "within tolerance" in lines["with them in float32"]
    assert (tmp_path / "out" / "customize_dtypes.cfg").read_text().startswith("Conv2D::InputDtype:float32,float32")


def test_a_max_pool_after_float32_producers_still_blocks(tmp_path):
    """The Ascend 910 library declares MaxPool float16 only, so keeping the convolution before it in float32
    does not make the pool follow: it stays float16 (docs/BEHAVIOUR.md §3), and suggest names it as blocking."""
    def build():
        rng = np.random.RandomState(0)
        image = tf.constant(rng.rand(1, 8, 8, 3).astype(np.float32))
        kernel = tf.compat.v1.get_variable("kernel", initializer=rng.randn(3, 3, 3, 4).astype(np.float32) * 0.3)
        features = tf.nn.conv2d(image, kernel, strides=[1, 1, 1, 1], padding="SAME")
        pooled = tf.nn.max_pool2d(features, 2, 2, "VALID", name="pool")
        loss = tf.reduce_mean(tf.square(pooled - 0.5), name="loss")
        return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss), loss, {}
    search = Search(record_training(build, 2), TIGHT, str(tmp_path), 200, within_reach=False)
    with pytest.raises(SuggestError) as raised:
        search.run()
    assert "Blocking it: 1 reduced ops the NPU has no float32 kernel for (1 MaxPool) stay float16 whatever the " \
           "files say, on the NPU as here: pool (MaxPool) created at " in str(raised.value)
    assert "Conv2D" in search.candidates and [record.name for record in search.hardware] == ["pool"]
