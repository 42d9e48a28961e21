"""`npu-debug compare` / `suggest` as users run them: unmodified scripts, in a fresh interpreter each, all of the
module's runs started at once (conftest.py's cli_run)."""
import csv
import pathlib

import pytest


ROOT = pathlib.Path(__file__).resolve().parents[2]
PLANTED = ROOT / "examples" / "precision_problems.py"
TF1_SCRIPTS = ROOT / "examples" / "tf1_scripts"
LENET = TF1_SCRIPTS / "lenet_fixed_loss_scale.py"
MLP = TF1_SCRIPTS / "mlp_loss_scale.py"
NO_SESSION = pathlib.Path(__file__).resolve().parent / "scripts" / "no_session.py"


CLI_RUNS = {
    "test_compare_runs_the_examples[lenet]":
        lambda out: ("compare", "--steps", "1", "--output", out, "--no-plot", LENET, "--steps", "3"),
    "test_compare_runs_the_examples[mlp]":
        lambda out: ("compare", "--steps", "1", "--output", out, "--no-plot", MLP, "--loops", "1",
                     "--iterations_per_loop", "3"),
    "test_suggest_runs_the_examples[lenet]":
        lambda out: ("suggest", "--steps", "2", "--no-verify", "--output", out, LENET, "--steps", "3"),
    "test_suggest_runs_the_examples[mlp]":
        lambda out: ("suggest", "--steps", "2", "--no-verify", "--output", out, "--fetch", "Mean:0", MLP,
                     "--loops", "1", "--iterations_per_loop", "3"),
    "test_suggest_proves_its_files_by_rerunning_the_script":
        lambda out: ("suggest", "--steps", "3", "--output", out / "fix", PLANTED, "--problem", "loss_scale"),
    # in its own process like the others: a script run in the test process would leave the launcher's state there
    "test_a_script_without_an_emulated_session_is_named": lambda out: ("compare", NO_SESSION),
}


@pytest.mark.parametrize("script", ["lenet", "mlp"])
def test_compare_runs_the_examples(cli_run, script):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    assert "step 1 (fetches" in out
    assert sorted(p.name for p in folder.iterdir() if p.suffix in (".csv", ".vis")) == \
        ["training_step1.csv", "training_step1.vis"]
    header, *rows = list(csv.reader(open(folder / "training_step1.csv")))
    local = header.index("LocalRelativeError")
    reduced = [r for r in rows if r[3] == "float16"]          # the NPU side's DataType column
    # every forward MatMul / Conv2D is measured (a gradient with respect to the input images is not: nothing
    # reads it), and so are the weight gradients
    heavy = [r for r in reduced if r[1] in ("MatMul", "Conv2D") and not r[2].startswith("gradients/")]
    assert heavy and all(r[local] != "" for r in heavy)
    assert any(r[local] != "" for r in reduced if r[1] in ("Conv2DBackpropFilter", "MatMul")
               and r[2].startswith("gradients/"))


@pytest.mark.parametrize("script", ["lenet", "mlp"])
def test_suggest_runs_the_examples(cli_run, script):
    _, code, out, err = cli_run
    assert code == 0, err[-3000:]
    assert "already within tolerance: nothing needs to stay in float32" in out
    assert "replays of the recorded steps" in out


def test_suggest_proves_its_files_by_rerunning_the_script(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    lines = {line.split("[")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert "OUTSIDE tolerance" in lines["this run, as configured"]
    assert "within tolerance" in lines["rerun with modify_mixlist.json"]
    assert "within tolerance" in lines["rerun with customize_dtypes.cfg"]
    assert (folder / "fix" / "modify_mixlist.json").exists()


def test_bad_inputs_get_clear_messages(capsys):
    from npu_bridge.debug import cli

    assert cli.main(["compare", "--steps", "1,2", str(PLANTED)]) == 2
    assert "dump_step string style is error, correct example:'0|5|10|50-100'" in capsys.readouterr().err
    assert cli.main(["suggest", "--steps", "0", str(PLANTED)]) == 2
    assert "--steps 0: the number of steps must be at least 1" in capsys.readouterr().err


def test_a_script_without_an_emulated_session_is_named(cli_run):
    _, code, _, err = cli_run
    assert code == 1 and f"{NO_SESSION} ran no emulated NPU session" in err
