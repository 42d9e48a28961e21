"""`npu-debug suggest` with its defaults on an NPUEstimator sample under force_fp16 (tests/debug/scripts/): a legal
file, proven by reruns from a fresh model_dir (its own file: the reruns are two more processes)."""
from .conftest import SCRIPTS, npu_debug


def test_estimator_under_force_fp16_gets_a_customize_dtypes_file_proven_from_a_fresh_model_dir(tmp_path):
    code, out, err = npu_debug("suggest", "--steps", "2", "--output", tmp_path / "out",
                               SCRIPTS / "estimator_force_fp16.py", cwd=tmp_path)
    assert code == 0, err[-3000:] + out
    assert "ended (exit code 1) after 1 of the 2 steps asked for" in err, "the NaN-loss hook stops the script"
    assert "keep in float32 (2): add, Sqrt" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["customize_dtypes.cfg"]
    assert "no modify_mixlist.json: the script's precision mode force_fp16 does not accept one" in out
    lines = {line.split("[")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert "within tolerance" in lines["recording's float32 replay"], "the float32 rerun reproduces the recording"
    assert "within tolerance" in lines["rerun with customize_dtypes.cfg"]
    assert not (tmp_path / "estimator_model_dir").exists(), "the script's own model_dir is not written"
