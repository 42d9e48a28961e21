"""The examples in examples/tf1_scripts/contrib (tf.contrib and Keras 2 module paths), each trained through npu-run
(python -m npu_bridge) as a user runs a port."""
import os
import pathlib
import subprocess
import sys

import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "tf1_scripts" / "contrib"


def _run(name, *args):
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(SCRIPTS / name), *args], check=False,
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip().splitlines()


def _trained(last_line):
    """(first, last) mean losses of a 'steps N loss A -> B' line."""
    words = last_line.split()
    return float(words[words.index("loss") + 1]), float(words[words.index("->") + 1])


@pytest.mark.parametrize("script, variables", [
    ("slim_arg_scope_cnn.py", ("variables conv1/weights conv1/BatchNorm/beta conv1/BatchNorm/moving_mean "
                               "conv1/BatchNorm/moving_variance")),
    ("layers_norm_mlp.py", ("variables hidden0/LayerNorm/beta hidden0/LayerNorm/gamma hidden1/LayerNorm/beta "
                            "hidden1/LayerNorm/gamma input_bn/beta input_bn/moving_mean input_bn/moving_variance")),
    ("rnn_seq_classifier.py", ("variables rnn/multi_rnn_cell/cell_0/lstm_cell/kernel "
                               "rnn/multi_rnn_cell/cell_0/lstm_cell/bias")),
    ("data_pipeline.py", None),
])
def test_contrib_script_trains_under_npu_run(script, variables):
    lines = _run(script)
    first, last = _trained(lines[-1])
    assert last < 0.7 * first, lines[-1]
    if variables:
        assert lines[-2] == variables


def test_hparams_script_takes_its_overrides_from_the_flag():
    lines = _run("hparams_training.py", "--hparams", "learning_rate=0.05,hidden_sizes=[8,8],use_layer_norm=true")
    assert lines[-2] == ('hparams {"batch_size": 32, "hidden_sizes": [8, 8], "learning_rate": 0.05, "optimizer": '
                         '"momentum", "train_steps": 30, "use_layer_norm": true}')
    first, last = _trained(lines[-1])
    assert last < first


def test_keras_2_path_script_fits_and_trains_on_npu_sessions():
    lines = _run("keras2_paths_cnn.py")
    fit = lines[-3].split()
    assert fit[:3] == ["keras", "fit", "loss"] and float(fit[5]) < float(fit[3]) / 2, lines[-3]
    assert float(fit[fit.index("accuracy") + 1]) > 0.9, lines[-3]
    assert lines[-2] == ("variables bn1/beta bn1/gamma bn1/moving_mean bn1/moving_variance classes/bias "
                         "classes/kernel conv1/bias conv1/kernel scale/gamma")
    first, last = _trained(lines[-1])
    assert last < 0.9 * first, lines[-1]
