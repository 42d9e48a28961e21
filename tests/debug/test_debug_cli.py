"""`npu-debug compare` / `suggest` as users run them: unmodified scripts, in a fresh interpreter each."""
import csv
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLANTED = ROOT / "examples" / "precision_problems.py"
TF1_SCRIPTS = ROOT / "examples" / "tf1_scripts"
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"     # real-style scripts (test_real_scripts_*.py)


def npu_debug(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "npu_bridge.debug.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=600, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("script, args", [("lenet_fixed_loss_scale.py", ["--steps", "3"]),
                                          ("mlp_loss_scale.py", ["--loops", "1", "--iterations_per_loop", "3"])])
def test_compare_runs_the_examples(tmp_path, script, args):
    code, out, err = npu_debug("compare", "--steps", "1", "--output", tmp_path, "--no-plot",
                                TF1_SCRIPTS / script, *args, cwd=tmp_path)
    assert code == 0, err[-3000:]
    assert "step 1 (fetches" in out
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".csv", ".vis")) == \
        ["training_step1.csv", "training_step1.vis"]
    header, *rows = list(csv.reader(open(tmp_path / "training_step1.csv")))
    local = header.index("LocalRelativeError")
    reduced = [r for r in rows if r[3] == "float16"]          # the NPU side's DataType column
    # every forward MatMul / Conv2D is measured (a gradient with respect to the input images is not: nothing
    # reads it), and so are the weight gradients
    heavy = [r for r in reduced if r[1] in ("MatMul", "Conv2D") and not r[2].startswith("gradients/")]
    assert heavy and all(r[local] != "" for r in heavy)
    assert any(r[local] != "" for r in reduced if r[1] in ("Conv2DBackpropFilter", "MatMul")
               and r[2].startswith("gradients/"))


@pytest.mark.parametrize("script, args", [("lenet_fixed_loss_scale.py", ["--steps", "3"]),
                                          ("mlp_loss_scale.py", ["--fetch", "Mean:0", "--", "--loops", "1",
                                                                 "--iterations_per_loop", "3"])])
def test_suggest_runs_the_examples(tmp_path, script, args):
    options, script_args = (args[:2], args[3:]) if "--" in args else ([], args)
    code, out, err = npu_debug("suggest", "--steps", "2", "--no-verify", "--output", tmp_path, *options,
                                TF1_SCRIPTS / script, *script_args, cwd=tmp_path)
    assert code == 0, err[-3000:]
    assert "already within tolerance: nothing needs to stay in float32" in out
    assert "replays of the recorded steps" in out


def test_suggest_proves_its_files_by_rerunning_the_script(tmp_path):
    code, out, err = npu_debug("suggest", "--steps", "3", "--output", tmp_path / "fix", PLANTED,
                                "--problem", "loss_scale", cwd=tmp_path)
    assert code == 0, err[-3000:]
    lines = {line.split("[")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert "OUTSIDE tolerance" in lines["this run, as configured"]
    assert "within tolerance" in lines["rerun with modify_mixlist.json"]
    assert "within tolerance" in lines["rerun with customize_dtypes.cfg"]
    assert (tmp_path / "fix" / "modify_mixlist.json").exists()


def test_bad_inputs_get_clear_messages(tmp_path, capsys):
    from npu_bridge.debug import cli

    assert cli.main(["compare", "--steps", "1,2", str(PLANTED)]) == 2
    assert "dump_step string style is error, correct example:'0|5|10|50-100'" in capsys.readouterr().err
    assert cli.main(["suggest", "--steps", "0", str(PLANTED)]) == 2
    assert "--steps 0: the number of steps must be at least 1" in capsys.readouterr().err
    no_session = tmp_path / "no_session.py"
    no_session.write_text("import tensorflow as tf\nprint(tf.constant(1.0))\n")
    code, _, err = npu_debug("compare", no_session, cwd=tmp_path)
    assert code == 1 and "ran no emulated NPU session" in err
