"""CI artifacts and the gate: npu-run --report-dir writes them from an unmodified script, npu-report diff compares.

Two runs of one seeded script must diff clean; a mixlist that moves one op, or another precision mode, must fail
the gate naming the op; a loss curve fails beyond the tolerance and passes within it; --strict makes a misspelt
mixlist op fatal. The subprocess runs are few: the in-process tests use the same writer on real sessions.
"""
import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.artifacts import ArtifactWriter
from npu_bridge.report_cli import main as npu_report
from npu_bridge.runtime import observers

V1 = tf.compat.v1

# tf.app.run (absl) on purpose: the summary must still be printed once, not by both the tf and absl loggers.
SCRIPT = """
    import numpy as np
    import tensorflow as tf
    from npu_bridge.npu_init import *

    tf.app.flags.DEFINE_string("mixlist", "", "modify_mixlist file")
    FLAGS = tf.app.flags.FLAGS


    def main(_):
        rng = np.random.RandomState(0)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.Variable(rng.randn(4, 3).astype(np.float32), name="w")
        logits = tf.matmul(x, w, name="logits")
        loss = tf.reduce_mean(tf.square(tf.nn.relu(logits)), name="loss")
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["use_off_line"].b = True
        custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"
        if FLAGS.mixlist:
            custom_op.parameter_map["modify_mixlist"].s = FLAGS.mixlist.encode()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run([loss, train], {x: rng.rand(8, 4).astype(np.float32)})


    if __name__ == "__main__":
        tf.app.run()
"""


def _npu_run(tmp_path, *args):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("NPU_BRIDGE_REPORT_DIR", None)
    env.pop("NPU_BRIDGE_STRICT", None)
    return subprocess.run([sys.executable, "-m", "npu_bridge", *args[:-1], str(script), *args[-1:]],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)


def test_two_runs_diff_clean_and_the_summary_is_printed_once(tmp_path, capsys):
    first = _npu_run(tmp_path, "--report-dir", str(tmp_path / "base"), "--mixlist=")
    second = _npu_run(tmp_path, "--report-dir", str(tmp_path / "new"), "--mixlist=")
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    summaries = [line for line in first.stderr.splitlines() if "ops reduced to" in line]
    assert len(summaries) == 1 and summaries[0].startswith("npu_bridge: NpuOptimizer mixed_float16: ")
    record = json.loads((tmp_path / "base" / "run.json").read_text())
    graph = record["graphs"]["graph-1"]
    assert graph["report"] == "graph-1.report.json" and graph["mode"] == "mixed_float16"
    assert graph["options"]["precision_mode_v2"] == "mixed_float16" and graph["soc"] == "ascend910"
    assert record["versions"]["tensorflow"] == tf.__version__ and graph["summary"].startswith("NpuOptimizer")
    assert [step for step, _ in graph["curves"]["loss:0"]] == [0, 1, 2, 3, 4]
    report = json.loads((tmp_path / "base" / "graph-1.report.json").read_text())
    assert any(r["name"] == "logits" and r["list"] == "white" for r in report["records"])
    capsys.readouterr()
    assert npu_report(["diff", str(tmp_path / "base"), str(tmp_path / "new")]) == 0
    assert "no decision or loss-curve changes in 1 graphs" in capsys.readouterr().out


def test_strict_makes_a_misspelt_mixlist_op_exit_1(tmp_path):
    mixlist = tmp_path / "mixlist.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["MatMu1V2"]}}))
    result = _npu_run(tmp_path, "--strict", f"--mixlist={mixlist}")
    assert result.returncode == 1
    assert "MatMu1V2" in result.stderr and "strict mode" in result.stderr


def _train(folder, precision_mode="mixed_float16", mixlist=None, lr=0.05):
    """One seeded training run in this process, observed by an ArtifactWriter writing to `folder`."""
    writer = ArtifactWriter(folder)
    observers.add_observer(writer)
    try:
        graph = tf.Graph()
        with graph.as_default():
            rng = np.random.RandomState(0)
            x = V1.placeholder(tf.float32, [None, 4], name="x")
            w = tf.Variable(rng.randn(4, 3).astype(np.float32), name="w")
            logits = tf.matmul(x, w, name="logits")
            loss = tf.reduce_mean(tf.square(tf.nn.relu(logits)), name="loss")
            train = V1.train.GradientDescentOptimizer(lr).minimize(loss)
            config = V1.ConfigProto()
            custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
            custom_op.name = "NpuOptimizer"
            custom_op.parameter_map["use_off_line"].b = True
            custom_op.parameter_map["precision_mode_v2"].s = precision_mode.encode()
            if mixlist:
                custom_op.parameter_map["modify_mixlist"].s = str(mixlist).encode()
            with V1.Session(config=config) as sess:
                sess.run(V1.global_variables_initializer())
                for _ in range(5):
                    sess.run([loss, train], {x: rng.rand(8, 4).astype(np.float32)})
    finally:
        observers.remove_observer(writer)
        writer.close()
    return str(folder)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("base"))


def test_a_mixlist_moving_one_op_fails_the_gate_naming_it(base, tmp_path, capsys):
    mixlist = tmp_path / "mixlist.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["MatMulV2"]}}))
    new = _train(tmp_path / "new", mixlist=mixlist)
    capsys.readouterr()
    junit = tmp_path / "diff.xml"
    assert npu_report(["diff", base, new, "--json", str(tmp_path / "diff.json"), "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "FAIL op logits: list white -> black; decision float16 -> float32" in out
    changed = json.loads((tmp_path / "diff.json").read_text())
    assert changed["failed"] and "logits" in [op["name"] for op in changed["graphs"][0]["ops"] if op["failing"]]
    suite = ElementTree.parse(junit).getroot()
    assert int(suite.get("failures")) >= 1 and "logits" in suite.find("testcase/failure").text


def test_another_precision_mode_fails_the_gate(base, tmp_path, capsys):
    new = _train(tmp_path / "new", precision_mode="origin")
    capsys.readouterr()
    assert npu_report(["diff", base, new]) == 1
    out = capsys.readouterr().out
    assert "FAIL mode mixed_float16 -> origin" in out and "FAIL op logits:" in out


def _with_curve_scaled(source, target, factor):
    record = json.loads((source / "run.json").read_text())
    curve = record["graphs"]["graph-1"]["curves"]["loss:0"]
    curve[-1][1] *= factor
    target.mkdir()
    (target / "run.json").write_text(json.dumps(record))
    (target / "graph-1.report.json").write_bytes((source / "graph-1.report.json").read_bytes())
    return str(target)


def test_loss_curve_beyond_the_tolerance_fails_and_within_it_passes(base, tmp_path, capsys):
    from pathlib import Path

    within = _with_curve_scaled(Path(base), tmp_path / "within", 1.005)
    beyond = _with_curve_scaled(Path(base), tmp_path / "beyond", 1.05)
    assert npu_report(["diff", base, within]) == 0
    capsys.readouterr()
    assert npu_report(["diff", base, beyond]) == 1
    assert "FAIL curve loss:0: step 4" in capsys.readouterr().out
    assert npu_report(["diff", base, beyond, "--rtol", "0.1"]) == 0


def test_unreadable_artifacts_are_exit_2_naming_the_file(tmp_path, capsys):
    assert npu_report(["diff", str(tmp_path / "missing"), str(tmp_path)]) == 2
    assert "missing" in capsys.readouterr().err


def test_only_ops_with_float_work_fail_when_present_on_one_side():
    from npu_bridge.artifacts.diff import GraphArtifacts, compare

    def graph(*records):
        return {"graph-1": GraphArtifacts({"mode": "mixed_float16", "soc": "ascend910", "reduced_dtype": "float16",
                                           "records": list(records)}, {})}

    shape = {"name": "grad/Shape", "list": "-", "decision": "unchanged"}
    const = {"name": "grad/Reshape/shape", "list": "-", "decision": "unchanged"}
    mul = {"name": "scale", "list": "gray", "decision": "float16"}
    # TensorFlow 2.15 builds a Shape op where 2.21 folds a Const: no decision changed.
    (diff,) = compare(graph(const, mul), graph(shape, mul))
    assert not diff.failed and {name for name, _, _ in diff.changed_ops} == {"grad/Shape", "grad/Reshape/shape"}
    (diff,) = compare(graph(const, mul), graph(const))
    assert diff.failed and [name for name, _, failing in diff.changed_ops if failing] == ["scale"]
