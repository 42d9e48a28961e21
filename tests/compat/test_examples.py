"""The TF1 example scripts, run end to end through the launcher on synthetic data."""
import os
import pathlib
import subprocess
import sys


EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "tf1_scripts"


def _run_example(name, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(EXAMPLES / name), *args], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip().splitlines()[-1]


def _numbers(line, before):
    words = line.split()
    return float(words[words.index(before) + 1])


def test_mlp_with_dynamic_loss_scale_and_iterations_per_loop():
    last = _run_example("mlp_loss_scale.py", "--loops", "4")
    assert _numbers(last, "global_step") == 40
    assert _numbers(last, "accuracy") > 0.8


def test_mlp_loss_scale_falls_from_2_pow_32_while_steps_are_skipped():
    # Every second overflow scales by 0.8; the first step that fits float16 came after 94 to 98 skipped steps in
    # most runs here and after more than 100 in 2 of 6 suite runs (the weights are not seeded): 100 were too few.
    last = _run_example("mlp_loss_scale.py", "--loops", "15", "--init_loss_scale", str(2 ** 32))
    assert 0 < _numbers(last, "global_step") < 150
    assert _numbers(last, "loss_scale") < 2 ** 32


def test_seed_snippets_run_as_written():
    assert _run_example("seed_mixed_float16.py")


def test_lenet_with_fixed_loss_scale():
    assert _run_example("lenet_fixed_loss_scale.py", "--steps", "20").startswith("steps 20 ")


def test_estimator_script_trains_on_every_tensorflow():
    assert _numbers(_run_example("estimator_mnist.py"), "global_step") == 40


def test_keras_script_through_set_keras_session_npu_config():
    assert _run_example("keras_session.py").startswith("keras loss")


def test_lstm_on_dynamic_rnn():
    assert _run_example("lstm_dynamic_rnn.py").startswith("lstm loss")
