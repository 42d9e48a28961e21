"""The examples run as users run them: `python examples/<script>.py` in a fresh interpreter."""
import pathlib
import subprocess
import sys

import tensorflow as tf

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
# tf.estimator as a plain `python` run sees it (TensorFlow ships it up to 2.15): not `hasattr(tf, "estimator")`
# here, which is also true once any earlier test in this process has installed npu-run's TF 1.15 room.
NATIVE_ESTIMATOR = tuple(int(part) for part in tf.__version__.split(".")[:2]) < (2, 16)


def _run(script):
    done = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_sess_run_mixed_precision_example_prints_every_mode():
    lines = _run("sess_run_mixed_precision.py").splitlines()
    rows = {line[:30].strip(): line[30:].split() for line in lines[1:]}  # label, then loss, accuracy, summary
    assert set(rows) == {"float32 (plain TensorFlow)", "must_keep_origin_dtype", "allow_fp32_to_fp16",
                         "mixed_float16", "force_fp16", "mixed_bfloat16 (Ascend910B1)"}
    plain_loss = float(rows["float32 (plain TensorFlow)"][0])
    assert float(rows["must_keep_origin_dtype"][0]) == plain_loss, "keep-origin computes exactly like float32"
    assert "NpuOptimizer mixed_float16:" in " ".join(rows["mixed_float16"])
    assert "reduced to bfloat16" in " ".join(rows["mixed_bfloat16 (Ascend910B1)"])
    for label, row in rows.items():
        assert abs(float(row[0]) - plain_loss) < 0.05, (label, row[0], plain_loss)
        assert float(row[1]) > 0.75, (label, row[1])


def test_estimator_example_runs_its_sessions_on_the_emulated_npu():
    out = _run("estimator_example.py")
    if not NATIVE_ESTIMATOR:
        assert "TensorFlow 2.15" in out
        return
    assert "[train] NpuOptimizer allow_mix_precision:" in out
    assert "[evaluate] NpuOptimizer allow_mix_precision:" in out
    accuracy = float(out.rsplit("accuracy", 1)[1])
    assert accuracy > 0.9
