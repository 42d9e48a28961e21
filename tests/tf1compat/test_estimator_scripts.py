"""A ported-style Estimator script (tf.estimator.Estimator, or NPUEstimator with NPURunConfig and
iterations_per_loop) trained through the launcher: train_and_evaluate, then predict, on every TensorFlow."""
import os
import pathlib
import subprocess
import sys

import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parent / "estimator_scripts"


@pytest.mark.parametrize("flags", [[], ["--npu"]], ids=["estimator", "npu_estimator"])
def test_classifier_script_trains_evaluates_and_predicts(tmp_path, flags):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(SCRIPTS / "classifier.py"),
                             "--model_dir", str(tmp_path / "model"), *flags],
                            env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    words = result.stdout.split()
    assert words[words.index("global_step") + 1] == "40"
    assert float(words[words.index("accuracy") + 1]) > 0.9
    assert words[words.index("predictions") + 1] == "512"
    assert (tmp_path / "model" / "model.ckpt-40.index").exists()
    emulated = [line for line in result.stderr.splitlines() if "emulated NPU graph built" in line]
    # NPUEstimator: the training graph, each evaluation's (at steps 20 and 40) and predict's run emulated
    assert len(emulated) == (4 if flags else 0)


def test_bert_style_tpu_estimator_script_fine_tunes_from_an_init_checkpoint(tmp_path):
    """TPUEstimator(use_tpu=False) with TPUEstimatorSpec, scaffold_fn and eval_metrics: trained, then trained again
    from the first run's checkpoint through scaffold_fn's init_from_checkpoint."""
    outputs = []
    for name, init in (("pretrain", []), ("finetune", ["--init_checkpoint", str(tmp_path / "pretrain" /
                                                                                "model.ckpt-40")])):
        result = subprocess.run([sys.executable, "-m", "npu_bridge", str(SCRIPTS / "bert_style.py"),
                                 "--output_dir", str(tmp_path / name), *init],
                                env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
                                timeout=300, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "emulated NPU graph built" in result.stderr
        words = result.stdout.split()
        assert words[words.index("global_step") + 1] == "40" and words[words.index("predictions") + 1] == "96"
        outputs.append(float(words[words.index("eval_accuracy") + 1]))
    assert outputs[0] > 0.9 and outputs[1] > 0.9
