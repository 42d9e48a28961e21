"""`npu-debug suggest` with its defaults on scripts written the way ported ones are (tests/debug/scripts/), the
module's runs started at once (conftest.py's cli_run)."""
import re

from .conftest import SCRIPTS

CLI_RUNS = {
    "test_suggest_records_the_loss_the_update_minimizes_keeps_the_gram_matmul_and_proves_it":
        lambda folder: ("suggest", "--steps", "6", "--output", folder / "out", SCRIPTS / "style_transfer.py"),
    "test_a_fetch_that_a_graph_lacks_skips_that_graph_and_names_it":
        lambda folder: ("suggest", "--steps", "1", "--no-verify", "--fetch", "add_1:0", "--output", folder / "out",
                        SCRIPTS / "style_transfer.py"),
    "test_dynamic_loss_scaling_from_2_to_the_32_needs_nothing_in_float32":
        lambda folder: ("suggest", "--steps", "2", "--no-verify", "--output", folder / "out",
                        SCRIPTS / "lenet_dynamic_loss_scale.py"),
}


def test_suggest_records_the_loss_the_update_minimizes_keeps_the_gram_matmul_and_proves_it(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    assert "recorded the training graph (fetches Adam): metric add_1:0, steps 0-5" in out, "train_op.run() alone"
    kept = re.search(r"keep in float32 \(\d+\): (.*)", out)
    assert kept and kept.group(1).split(", ") == ["MatMul_1"], "not the divisor's gradient, which nothing reads"
    assert "MatMul_1 created at " in out and "style_transfer.py:33: return tf.matmul(flat, flat" in out
    assert (folder / "out" / "modify_mixlist.json").exists() and (folder / "out" / "customize_dtypes.cfg").exists()
    assert err.endswith("\n")
    assert err.count("[emulated NPU graph built]") == 1, "the replays' sessions log nothing"
    assert re.search(r"replay \d+ / bound \d+, \d+ s: ", err), "progress, one line per replay in a log"
    # the reruns record add_1:0 in the training graph too, skipping the graphs that do not compute it
    lines = {line.split("[")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert "within tolerance" in lines["recording's float32 replay"], "the float32 rerun reproduces the recording"
    assert "OUTSIDE tolerance" in lines["this run, as configured"]
    assert "within tolerance" in lines["rerun with modify_mixlist.json"]
    assert "within tolerance" in lines["rerun with customize_dtypes.cfg"]


def test_a_fetch_that_a_graph_lacks_skips_that_graph_and_names_it(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    assert "skipped the graph fetching truediv:0: its step does not compute 'add_1:0'" in out
    assert "recorded the training graph (fetches Adam)" in out
    assert "metric add_1:0, steps 0-0" in out


def test_dynamic_loss_scaling_from_2_to_the_32_needs_nothing_in_float32(cli_run):
    folder, code, out, err = cli_run
    assert code == 0, err[-3000:]
    skipped = re.search(r"(\d+) steps before it were skipped by loss scaling \(step 0 skipped by loss scaling, "
                        r"scale 2\^32 -> 2\^31", out)
    assert skipped, out
    first = int(skipped.group(1))
    assert f"metric sparse_softmax_cross_entropy_loss/value:0, steps {first}-{first + 1}" in out
    assert "already within tolerance: nothing needs to stay in float32" in out
    assert not (folder / "out").exists()
