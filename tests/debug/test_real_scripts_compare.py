"""`npu-debug compare` with no flags on scripts written the way ported ones are (tests/debug/scripts/), the
module's runs started at once (conftest.py's cli_run)."""
import re

from .conftest import SCRIPTS

CLI_RUNS = {
    "test_compare_scans_the_training_graph_to_the_step_where_the_gram_matrix_overflows":
        lambda folder: ("compare", "--no-plot", "--output", folder / "out", SCRIPTS / "style_transfer.py"),
    "test_steps_dynamic_loss_scaling_skips_are_reported_and_not_judged":
        lambda folder: ("compare", "--no-plot", "--scan", "2", "--output", folder / "out",
                        SCRIPTS / "lenet_dynamic_loss_scale.py"),
    "test_steps_apply_to_every_graph_and_a_graph_that_never_reaches_them_is_named":
        lambda folder: ("compare", "--no-plot", "--steps", "1", "--run-to-end", "--output", folder / "out",
                        SCRIPTS / "style_transfer.py", "--iterations", "3"),
}


def test_compare_scans_the_training_graph_to_the_step_where_the_gram_matrix_overflows(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    found = re.search(r"first op breaking accuracy at step (\d+): (\S+) \(MatMul\), created at (.*)", out)
    assert found, out
    step, op, line = int(found.group(1)), found.group(2), found.group(3)
    assert step > 0, "step 0 is healthy: the scan has to go on"
    assert op == "MatMul_1" and "style_transfer.py:33: return tf.matmul(flat, flat, transpose_a=True)" in line
    assert "graph 1 (graph1_fetching_truediv, fetches truediv:0): steps 0 compared" in out
    assert f"the training graph (training, fetches Adam): steps 0-{step} compared" in out
    assert "graph 2 (graph2_fetching_add_1, fetches add_1:0): steps 0-1 compared" in out, "the loss's .eval() graph"
    assert "to look further: --scan" in out
    written = sorted(p.name for p in (folder / "out").iterdir() if p.suffix == ".csv")
    assert written == ["graph1_fetching_truediv_step0.csv", "graph2_fetching_add_1_step1.csv", f"training_step{step}.csv"]


def test_steps_dynamic_loss_scaling_skips_are_reported_and_not_judged(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    assert "training: step 0 skipped by loss scaling, scale 2^32 -> 2^31: not judged" in out
    assert "first op breaking accuracy" not in out
    skipped = re.search(r"steps 0-(\d+) skipped by loss scaling", out)
    assert skipped, out
    first_applied = int(skipped.group(1)) + 1
    assert f"steps {first_applied}-{first_applied + 1} compared" in out


def test_steps_apply_to_every_graph_and_a_graph_that_never_reaches_them_is_named(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    assert "iteration 2 loss" in out, "--run-to-end: the script finishes"
    assert "graph 1 (graph1_fetching_truediv, fetches truediv:0): no step compared" in out, "it runs once"
    assert "the training graph (training, fetches Adam): steps 1 compared" in out
    assert "graph 2 (graph2_fetching_add_1, fetches add_1:0): steps 1 compared" in out
    assert sorted(p.name for p in (folder / "out").iterdir()) == [
        "graph2_fetching_add_1_step1.csv", "graph2_fetching_add_1_step1.vis", "training_step1.csv", "training_step1.vis"]
    assert "to look further" not in out, "chosen steps are not a scan"
