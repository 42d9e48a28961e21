"""`npu-debug suggest` with its defaults on scripts written the way ported ones are (tests/debug/scripts/)."""
import re

from .test_debug_cli import SCRIPTS, npu_debug


def test_suggest_records_the_loss_the_update_minimizes_not_an_eval_call_and_keeps_the_gram_matmul(tmp_path):
    code, out, err = npu_debug("suggest", "--steps", "6", "--no-verify", "--output", tmp_path / "out",
                               SCRIPTS / "style_transfer.py", cwd=tmp_path)
    assert code == 0, err[-3000:]
    assert "recorded the training graph (fetches Adam): metric add_1:0, steps 0-5" in out, "train_op.run() alone"
    kept = re.search(r"keep in float32 \(\d+\): (.*)", out)
    assert kept and kept.group(1).split(", ") == ["MatMul_1"], "not the divisor's gradient, which nothing reads"
    assert "MatMul_1 created at " in out and "style_transfer.py:33: return tf.matmul(flat, flat" in out
    assert (tmp_path / "out" / "modify_mixlist.json").exists() and (tmp_path / "out" / "customize_dtypes.cfg").exists()
    assert err.endswith("\n")
    assert err.count("[emulated NPU graph built]") == 1, "the replays' sessions log nothing"
    assert re.search(r"replay \d+ / bound \d+, \d+ s: ", err), "progress, one line per replay in a log"


def test_a_fetch_that_a_graph_lacks_skips_that_graph_and_names_it(tmp_path):
    code, out, err = npu_debug("suggest", "--steps", "1", "--no-verify", "--fetch", "add_1:0", "--output",
                               tmp_path / "out", SCRIPTS / "style_transfer.py", cwd=tmp_path)
    assert code == 0, err[-3000:]
    assert "skipped the graph fetching truediv:0: its step does not compute 'add_1:0'" in out
    assert "recorded the training graph (fetches Adam)" in out
    assert "metric add_1:0, steps 0-0" in out


def test_dynamic_loss_scaling_from_2_to_the_32_needs_nothing_in_float32(tmp_path):
    code, out, err = npu_debug("suggest", "--steps", "2", "--no-verify", "--output", tmp_path / "out",
                               SCRIPTS / "lenet_dynamic_loss_scale.py", cwd=tmp_path)
    assert code == 0, err[-3000:]
    skipped = re.search(r"(\d+) steps before it were skipped by loss scaling \(step 0 skipped by loss scaling, "
                        r"scale 2\^32 -> 2\^31", out)
    assert skipped, out
    first = int(skipped.group(1))
    assert f"metric sparse_softmax_cross_entropy_loss/value:0, steps {first}-{first + 1}" in out
    assert "already within tolerance: nothing needs to stay in float32" in out
    assert not (tmp_path / "out").exists()
