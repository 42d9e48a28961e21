"""Ported-script-style programs using Huawei's modules (fused optimizer ops, DynamicGRUV2 / DynamicAUGRU,
npu_convert_dropout, moxing) trained through npu-run (python -m npu_bridge), as a user runs them."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np

SCRIPTS = pathlib.Path(__file__).parent / "huawei_scripts"


def _npu_run(script, *args, cwd):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(SCRIPTS / script), *args], cwd=str(cwd),
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _numbers(line):
    return [float(value) for value in re.findall(r"[-+]?\d*\.?\d+(?:e[-+]?\d+)?", line)]


def test_bert_style_fused_adam_and_lamb_optimizers_train(tmp_path):
    lines = {line.split()[0]: line for line in _npu_run("fused_optimizers.py", cwd=tmp_path).splitlines()}
    for optimizer in ("adam", "lamb"):
        first, last, steps = _numbers(lines[optimizer])
        assert last < 0.5 * first, lines[optimizer]
        assert steps == 60


def test_dien_style_gru_model_with_converted_dropout_and_moxing_paths(tmp_path):
    rng = np.random.default_rng(0)
    history = rng.normal(size=(32, 6, 4)).astype(np.float32)
    labels = (history[:, :, 0].sum(axis=1, keepdims=True) > 0).astype(np.float32)
    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "history.npz", history=history, lengths=rng.integers(1, 7, 32).astype(np.int32),
             labels=labels)
    out = _npu_run("dien_style.py", "--data_url", str(tmp_path / "data"), "--train_url", str(tmp_path / "output"),
                   cwd=tmp_path)
    lines = out.splitlines()
    assert "cached ['history.npz']" in lines
    assert "converted 2" in lines        # the Keras Dropout layer and tf.layers.dropout
    first, last = _numbers(next(line for line in lines if line.startswith("loss")))
    assert last < first
    assert "saved ['model.ckpt.index']" in lines
    assert (tmp_path / "output" / "model.ckpt.index").is_file()
    assert any(line.startswith("obs error") and "'obs://my-bucket/output' is an OBS bucket path" in line
               for line in lines), out
