"""CI artifacts beyond decisions and loss: loss scale and skipped steps in run.json and in TensorBoard event files,
the skipped-step gate, multi-rank folders compared rank by rank, a mixlist change summed up, the HTML page."""
import json
import re

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from npu_bridge.artifacts import ArtifactWriter
from npu_bridge.estimator.npu.npu_loss_scale_manager import ExponentialUpdateLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.report_cli import main as npu_report
from npu_bridge.runtime import observers

V1 = tf.compat.v1
STEPS = 24


def _train_loss_scaled(folder):
    """Dynamic loss scaling from 2^32 halving on every overflow: the first steps overflow float16 and are skipped
    until the scale fits, then it stays. The script fetches the loss only, never the scale."""
    writer = ArtifactWriter(folder)
    observers.add_observer(writer)
    try:
        with tf.Graph().as_default():
            rng = np.random.RandomState(0)
            x = V1.placeholder(tf.float32, [None, 8], name="x")
            w = tf.Variable(rng.randn(8, 1).astype(np.float32), name="w")
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0), name="loss")
            manager = ExponentialUpdateLossScaleManager(2 ** 32, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
            train = NPULossScaleOptimizer(V1.train.GradientDescentOptimizer(0.01), manager).minimize(loss)
            config = V1.ConfigProto()
            custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
            custom_op.name = "NpuOptimizer"
            custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
            data = rng.randn(16, 8).astype(np.float32)
            with V1.Session(config=config) as sess:
                sess.run(V1.global_variables_initializer())
                sess.run(loss, {x: data})          # an evaluation: no loss-scaling step
                for _ in range(STEPS):
                    sess.run([loss, train], {x: data})
    finally:
        observers.remove_observer(writer)
        writer.close()
    return folder


@pytest.fixture(scope="module")
def loss_scaled(tmp_path_factory):
    return _train_loss_scaled(tmp_path_factory.mktemp("scaled"))


def test_run_json_records_the_loss_scale_and_the_skipped_steps(loss_scaled):
    entry = json.loads((loss_scaled / "run.json").read_text())["graphs"]["graph-1"]
    scales = entry["loss_scale"]["loss_scale:0"]
    skipped = entry["skipped_steps"]["loss_scale:0"]
    assert 10 <= len(skipped) < STEPS and skipped == list(range(len(skipped)))
    assert [step for step, _ in scales] == list(range(STEPS))
    assert [scale for _, scale in scales[:len(skipped)]] == [2.0 ** (31 - i) for i in range(len(skipped))]
    assert {scale for _, scale in scales[len(skipped):]} == {2.0 ** (32 - len(skipped))}      # after each step


def test_tensorboards_reader_reads_the_curves_scale_and_skipped_steps(loss_scaled):
    events = EventAccumulator(str(loss_scaled / "tensorboard" / "graph-1"))
    events.Reload()
    assert {"loss:0", "loss_scale/loss_scale:0", "skipped_steps/loss_scale:0"} <= set(events.Tags()["scalars"])
    record = json.loads((loss_scaled / "run.json").read_text())["graphs"]["graph-1"]
    loss = [(e.step, e.value) for e in events.Scalars("loss:0")]
    assert loss == [(step, pytest.approx(value)) for step, value in record["curves"]["loss:0"]]
    count = len(record["skipped_steps"]["loss_scale:0"])
    skipped = [(e.step, e.value) for e in events.Scalars("skipped_steps/loss_scale:0")]
    assert skipped[:2] == [(0, 1.0), (1, 2.0)] and skipped[-1] == (STEPS - 1, float(count))
    assert events.Scalars("loss_scale/loss_scale:0")[-1].value == record["loss_scale"]["loss_scale:0"][-1][1]


def _run_folder(folder, skipped, steps=40, mixlist=None, records=None, loss=None):
    """A --report-dir folder by hand: `steps` loss-scaled steps, `skipped` of them skipped."""
    folder.mkdir(parents=True)
    records = records or [{"name": "mm", "list": "white", "decision": "float16", "emulated": False}]
    (folder / "graph-1.report.json").write_text(json.dumps({"mode": "mixed_float16", "records": records}))
    curve = loss or [[step, 1.0 / (step + 1)] for step in range(steps)]
    (folder / "run.json").write_text(json.dumps({"format": "npu_bridge-run/1", "graphs": {"graph-1": {
        "report": "graph-1.report.json", "options": {"modify_mixlist": mixlist}, "curves": {"loss:0": curve},
        "loss_scale": {"loss_scale:0": [[step, 1024.0] for step in range(steps)]},
        "skipped_steps": {"loss_scale:0": skipped}}}}))
    return str(folder)


def test_the_gate_fails_when_skips_after_the_scale_settled_pass_half_a_percent(tmp_path, capsys):
    base = _run_folder(tmp_path / "base", [0, 1, 2])
    assert npu_report(["diff", base, _run_folder(tmp_path / "same", [0, 1, 2, 3])]) == 0   # still settling
    capsys.readouterr()
    assert npu_report(["diff", base, _run_folder(tmp_path / "new", [0, 1, 2, 20])]) == 1
    out = capsys.readouterr().out
    assert ("FAIL loss scale loss_scale:0: settled at step 3 (scale 1024), then 1 of 37 steps skipped (2.70%); "
            "baseline: settled at step 3 (scale 1024), then 0 of 37 steps skipped (0.00%) (beyond the 0.5% of "
            "steps") in out
    assert npu_report(["diff", base, str(tmp_path / "new"), "--max-skip-rate", "0.05"]) == 0
    capsys.readouterr()
    assert npu_report(["diff", base, _run_folder(tmp_path / "never", list(range(40)))]) == 1
    assert "all 40 loss-scaled steps were skipped (the scale never settled)" in capsys.readouterr().out


def test_multi_rank_folders_are_compared_rank_by_rank(tmp_path, capsys):
    for side in ("base", "new"):
        for rank in (0, 1):
            moved = side == "new" and rank == 1
            _run_folder(tmp_path / side / f"rank{rank}", [], loss=[[0, 2.0 if moved else 1.0]])
    assert npu_report(["diff", str(tmp_path / "base"), str(tmp_path / "new")]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^rank0/graph-1: ok", out, re.M) and re.search(r"^rank1/graph-1: CHANGED", out, re.M)
    assert "FAIL curve loss:0: step 0 is 2, baseline 1" in out
    assert "npu-report diff: 1 of 2 graphs changed" in out


def test_a_mixlist_change_gets_one_summary_line_before_the_ops_it_moved(tmp_path, capsys):
    ops = [{"name": f"act{i}", "list": "gray", "decision": "float32", "emulated": False} for i in range(4)]
    moved = [dict(op, list="white", decision="float16", origin="modify_mixlist ops.json: white-list.to-add")
             for op in ops[:3]] + ops[3:]
    base = _run_folder(tmp_path / "base", [], records=ops)
    new = _run_folder(tmp_path / "new", [], records=moved, mixlist="ops.json")
    assert npu_report(["diff", base, new, "--html", str(tmp_path / "diff.html")]) == 1
    lines = capsys.readouterr().out.splitlines()
    summary = [i for i, line in enumerate(lines) if "modify_mixlist changed" in line]
    assert len(summary) == 1 and lines[summary[0]] == (
        "  modify_mixlist changed: none -> ops.json: 3 ops moved list: 3 gray -> white (act0, act1, act2)")
    assert summary[0] < min(i for i, line in enumerate(lines) if " op act" in line)


def test_the_html_page_is_self_contained_with_both_curves_on_one_plot(tmp_path, capsys):
    base = _run_folder(tmp_path / "base", [])
    new = _run_folder(tmp_path / "new", [], loss=[[step, 1.5 / (step + 1)] for step in range(40)],
                      records=[{"name": "mm", "list": "black", "decision": "float32", "emulated": False}])
    page_path = tmp_path / "diff.html"
    assert npu_report(["diff", base, new, "--html", str(page_path)]) == 1
    page = page_path.read_text()
    assert "<script" not in page and "src=" not in page and "href=" not in page and "@import" not in page
    assert "FAILED: npu-report diff: 1 of 1 graphs changed" in page
    assert "<td>mm</td><td>list white -&gt; black; decision float16 -&gt; float32</td>" in page
    loss_plot = page[page.index("aria-label='loss:0'"):]
    loss_plot = loss_plot[:loss_plot.index("</svg>")]
    assert loss_plot.count("<polyline") == 2 and "baseline" in loss_plot and "new run" in loss_plot
    assert "FAIL curve loss:0: step 0 is 1.5, baseline 1" in page
