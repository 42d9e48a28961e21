"""suggest where the NPU itself cannot reach float32: the image's gradient passes a convolution's input gradient
(Conv2DBackpropInputD, float16 only on the Ascend 910). A tolerance tighter than that float16 leaves makes the
gap the hardware's; suggest names it, and by default judges against float32 widened by it."""
from .test_debug_cli import SCRIPTS, npu_debug

SCRIPT = SCRIPTS / "conv_input_gradient.py"
TIGHT = ("--steps", "3", "--no-verify", "--rtol", "1e-7", "--atol", "0")
BLOCKER = ("1 reduced ops the NPU has no float32 kernel for (1 Conv2DBackpropInputD) stay float16 whatever the "
           "files say, on the NPU as here: gradients/Conv2D_grad/Conv2DBackpropInput (Conv2DBackpropInputD) "
           "created at ")
LINE = "conv_input_gradient.py:11: train_op = tf.train.AdamOptimizer(0.1).minimize(loss)"


def test_strict_says_metric_steps_best_and_the_ops_without_a_float32_kernel(tmp_path):
    code, out, err = npu_debug("suggest", *TIGHT, "--strict", "--output", tmp_path / "out", SCRIPT, cwd=tmp_path)
    assert code == 1, out + err[-3000:]
    message = err.splitlines()[-1]
    assert message.startswith("npu-debug suggest: metric Mean:0 over steps 0-2 cannot be brought within the "
                              "tolerance |value - float32| <= 0 + 1e-07 * |float32|: even with all 9 reduced ops")
    assert "the best reached is " in message and "with 9 ops in float32 (Conv2D, " in message
    assert "Blocking it: " + BLOCKER in message and LINE in message
    assert "That gap is the hardware's (without --strict" in message
    assert not (tmp_path / "out").exists()


def test_by_default_the_hardware_gap_widens_the_tolerance_and_the_convolution_is_found(tmp_path):
    code, out, err = npu_debug("suggest", *TIGHT, "--output", tmp_path / "out", SCRIPT, cwd=tmp_path)
    assert code == 0, err[-3000:]
    assert "outside the tolerance even so: " + BLOCKER in out and LINE in out
    assert "+ the NPU's own gap of that step (--strict: float32 alone)" in out
    assert "keep in float32 (1): Conv2D\n" in out
    lines = {line.split("[")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert "OUTSIDE tolerance" in lines["as configured"] and "within tolerance" in lines["with them in float32"]
    assert (tmp_path / "out" / "customize_dtypes.cfg").read_text().startswith("Conv2D::InputDtype:float32,float32")
