"""npu-report on a real tf.compat.v1 MLP training graph written as .pb, .pbtxt and .meta.

The CLI must show what the precision pass decides (the same Report a session gets), filter it, explain one op,
compare two modes, and fail with the session's own configuration messages, exit code 2 and no traceback.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.oplib import BUILTIN_ROOT
from npu_bridge.core.options import options_from_parameter_map
from npu_bridge.core.precision import rewrite
from npu_bridge.report_cli import main
from npu_bridge.report_cli.render import run_once_ops

V1 = tf.compat.v1


def _mlp_training_graph():
    """x -> dense(relu) -> dense -> softmax cross entropy -> mean, trained by SGD, with a Saver."""
    graph = tf.Graph()
    with graph.as_default():
        x = V1.placeholder(tf.float32, [None, 8], name="x")
        labels = V1.placeholder(tf.float32, [None, 3], name="labels")
        w1 = V1.get_variable("w1", [8, 16])
        b1 = V1.get_variable("b1", [16], initializer=V1.zeros_initializer())
        hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1, name="mm1"), b1, name="bias1"), name="hidden")
        w2 = V1.get_variable("w2", [16, 3])
        logits = tf.matmul(hidden, w2, name="logits")
        cross_entropy = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = tf.reduce_mean(cross_entropy, name="loss")
        V1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        saver = V1.train.Saver()
    return graph, saver


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graphs")
    graph, saver = _mlp_training_graph()
    graph_def = graph.as_graph_def()
    V1.train.write_graph(graph_def, str(folder), "mlp.pb", as_text=False)
    V1.train.write_graph(graph_def, str(folder), "mlp.pbtxt", as_text=True)
    V1.train.write_graph(graph_def, str(folder), "text_named.pb", as_text=True)
    with graph.as_default():
        saver.export_meta_graph(str(folder / "mlp.meta"))
        saver.export_meta_graph(str(folder / "text.meta"), as_text=True)
    mixlist = folder / "mixlist.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["ReluV2", "MatMul"]}}))
    return {"folder": folder, "graph_def": graph_def, "pb": str(folder / "mlp.pb"),
            "pbtxt": str(folder / "mlp.pbtxt"), "meta": str(folder / "mlp.meta"),
            "text_meta": str(folder / "text.meta"), "text_named_pb": str(folder / "text_named.pb"),
            "mixlist": str(mixlist)}


def run(capsys, *argv, wide=True):
    """npu-report with argv; --wide (one line per op, full names) unless wide=False asks for the default view."""
    code = main([str(a) for a in argv] + (["--wide"] if wide else []))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def expected_report(graph_def, params):
    return rewrite(graph_def, options_from_parameter_map(params)).report


def table_rows(out):
    """{op name: [TF type, IR type, list, decision, casts, reason]} of the printed table."""
    lines = out.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("op ")))
    header_cells = re.split(r" {2,}", lines[header])
    rows, name = {}, None
    for line in lines[header + 1:]:
        if line.startswith("* "):
            break
        if line.startswith(" "):            # default view: the reason on lines below its row (and the header's)
            if not rows:
                continue
            if len(rows[name]) == len(header_cells) - 1:
                rows[name].append(line.strip())
            else:
                rows[name][-1] += " " + line.strip()
            continue
        cells = re.split(r" {2,}", line.rstrip(), maxsplit=len(header_cells) - 1)
        name = cells[0]
        rows[name] = cells[1:]
    return rows


def test_table_shows_the_sessions_decisions(files, capsys):
    code, out, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", wide=False)
    assert code == 0 and "Traceback" not in err
    report = expected_report(files["graph_def"], {"precision_mode_v2": "mixed_float16"})
    assert out.splitlines()[0] == report.summary()
    rows = table_rows(out)
    assert rows["mm1"][:5] == ["MatMul", "MatMulV2", "white", "float16*", str(len(report.by_name("mm1").casts))]
    assert "precision_reduce=true" in rows["mm1"][5]
    # Relu computes in float32 between casts (slow float16 CPU kernel): its decision carries the * mark.
    # The Relu whose output its ReluGrad reads is the engine's fused ReluV2.
    assert rows["hidden"][:4] == ["Relu", "ReluV2", "gray", "float16*"]
    assert "follows its float16 producer 'bias1'" in rows["hidden"][5]
    assert rows["loss"][:4] == ["Mean", "ReduceMeanD", "black", "float32"]
    assert "x" not in rows and "w1/Assign" not in rows      # no float work: shown only with --all
    run_once = run_once_ops(files["graph_def"])
    assert "w1/Initializer/random_uniform/mul" in run_once and "mm1" not in run_once
    shown = [r for r in report.records if r.decision != "unchanged" and r.name not in run_once]
    # Names longer than the default view's 40-column op field are shortened from the left.
    assert set(rows) == {r.name if len(r.name) <= 40 else "..." + r.name[-37:] for r in shown}
    hidden = sum(1 for r in report.records if r.decision != "unchanged" and r.name in run_once)
    assert f"{len(shown)} of {report.n_ops} ops shown ({hidden} run-once initializer ops hidden" in out
    assert "* computed in float32 between casts" in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_wide_view_puts_each_op_on_one_line_and_all_shows_initializers(files, capsys):
    _, default, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", wide=False)
    _, wide, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16")
    assert table_rows(wide)["hidden"] == table_rows(default)["hidden"]
    assert len(wide.splitlines()) < len(default.splitlines()) and max(len(line) for line in wide.splitlines()) > 120
    _, everything, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--all")
    assert "w1/Initializer/random_uniform/mul" in table_rows(everything)


@pytest.mark.parametrize("form", ["pbtxt", "meta", "text_meta", "text_named_pb"])
def test_every_graph_file_form_gives_the_same_report(files, capsys, form):
    _, from_pb, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16")
    code, out, _ = run(capsys, files[form], "--precision-mode-v2", "mixed_float16")
    assert code == 0 and out == from_pb


def test_filters(files, capsys):
    _, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--list", "white")
    rows = table_rows(out)
    assert {"mm1", "logits", "gradients/mm1_grad/MatMul"} <= set(rows)
    assert {row[2] for row in rows.values()} == {"white"}
    _, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--list", "black", "--list", "gray")
    assert {row[2] for row in table_rows(out).values()} == {"black", "gray"}
    _, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--reduced-only")
    rows = table_rows(out)
    report = expected_report(files["graph_def"], {"precision_mode_v2": "mixed_float16"})
    assert set(rows) == {r.name for r in report.reduced()}
    assert "loss" not in rows and "hidden" in rows
    _, out, _ = run(capsys, files["pb"], "--all")
    rows = table_rows(out)
    assert rows["x"][:4] == ["Placeholder", "Placeholder", "-", "unchanged"]
    assert len(rows) == report.n_ops


def test_json_is_the_reports_json(files, capsys, tmp_path):
    out_path = tmp_path / "report.json"
    code, _, _ = run(capsys, files["meta"], "--precision-mode", "allow_mix_precision", "--json", out_path)
    assert code == 0
    data = json.loads(out_path.read_text())
    report = expected_report(files["graph_def"], {"precision_mode": "allow_mix_precision"})
    assert out_path.read_text() == report.to_json()
    assert data["mode"] == "allow_mix_precision" and data["n_reduced"] == report.n_reduced > 0
    mm1 = next(r for r in data["records"] if r["name"] == "mm1")
    assert mm1["decision"] == "float16" and mm1["emulated"] is True and mm1["casts"]


def test_op_explains_a_gray_op_through_its_producer(files, capsys):
    reshape = "softmax_cross_entropy_with_logits/Reshape"     # gray, retyped in place: no cast of its own
    code, out, _ = run(capsys, files["pbtxt"], "--precision-mode-v2", "mixed_float16", "--op", "hidden", reshape)
    assert code == 0
    hidden, reshaped = out.split(f"op {reshape}")
    assert "op hidden" in hidden
    assert "IR type   ReluV2 (vector op)" in hidden
    assert "library   built-in operator library, soc ascend910" in hidden
    assert "list      gray (from built-in ascend910: no precision_reduce (gray))" in hidden
    assert "producer  bias1 <- BiasAdd [gray] float16" in hidden
    # Relu computes in float32 between casts (its float16 CPU kernel is ~10x slower): the casts and why.
    assert "cast      bias1-0-CastToFp32-NpuBridge: reads bias1, float16 -> float32" in hidden
    assert "cast      hidden-0-CastToFp16-NpuBridge: reads hidden, float32 -> float16" in hidden
    assert "emulated  yes" in hidden and "float32 kernel for Relu is far faster on CPU than its float16" in hidden
    assert "IR type   Reshape (vector op)" in reshaped
    assert "list      gray (from built-in ascend910: no precision_reduce (gray))" in reshaped
    assert "producer  logits <- MatMul [white] float16" in reshaped
    assert "cast      none" in reshaped and "emulated  no" in reshaped


def test_op_explains_casts_and_emulation_of_a_cube_op(files, capsys):
    code, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--op", "logits", "loss")
    assert code == 0
    logits, loss = out.split("op loss")
    assert "IR type   MatMulV2 (cube op)" in logits
    assert "producer  hidden <- Relu [gray] float16" in logits
    assert "producer  w2/read <- Identity [-] unchanged" in logits     # a variable read: a graph source
    assert "cast      w2/read-0-CastToFp16-NpuBridge: reads w2/read, float32 -> float16" in logits
    assert "cast      logits-0-CastToFp16-NpuBridge: reads logits, float32 -> float16" in logits
    assert "emulated  yes" in logits
    assert "list      black (from built-in ascend910 precision_reduce=false)" in loss


def test_op_names_where_a_list_came_from(files, capsys, tmp_path, monkeypatch):
    code, out, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16",
                         "--modify-mixlist", files["mixlist"], "--op", "hidden")
    assert code == 0
    assert f"list      black (from modify_mixlist {files['mixlist']}: black-list.to-add)" in out
    assert "decision  float32" in out
    assert err.count("'MatMul' is a TensorFlow op type") == 1 and err.startswith("npu-report: warning: ")

    root = tmp_path / "opp"
    shutil.copytree(BUILTIN_ROOT, root)
    library = next(root.rglob("aic-ascend910-ops-info.json"))
    data = json.loads(library.read_text())
    data["ReluV2"]["precision_reduce"] = {"flag": "true"}
    library.write_text(json.dumps(data))
    monkeypatch.setenv("ASCEND_OPP_PATH", str(root))
    code, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--op", "hidden")
    assert code == 0
    assert f"library   ASCEND_OPP_PATH ({library.parent}), soc ascend910" in out
    assert "list      white (from ascend910 library in" in out and "precision_reduce=true" in out


def test_op_under_a_mode_without_lists_says_so(files, capsys):
    _, out, _ = run(capsys, files["pb"], "--op", "hidden")
    assert "lists only decide under mixed_float16/mixed_bfloat16, not allow_fp32_to_fp16 (default)" in out


def test_compare_mode_lists_what_mixed_float16_changes(files, capsys):
    code, out, _ = run(capsys, files["pb"], "--precision-mode", "allow_fp32_to_fp16", "--compare-mode",
                       "mixed_float16")
    assert code == 0
    base = expected_report(files["graph_def"], {"precision_mode": "allow_fp32_to_fp16"})
    mixed = expected_report(files["graph_def"], {"precision_mode_v2": "mixed_float16"})
    differing = {r.name for r in base.records if mixed.by_name(r.name).decision != r.decision}
    assert out.splitlines()[:3] == [base.summary(), mixed.summary(),
                                    f"{len(differing)} ops decide differently under allow_fp32_to_fp16 and "
                                    "mixed_float16"]
    rows = table_rows(out)
    assert set(rows) == differing
    # Relu computes in float32 between casts under mixed_float16 (slow float16 CPU kernel): marked *.
    assert rows["hidden"][:4] == ["ReluV2", "gray", "float32", "float16*"]
    assert "follows its float16 producer" in rows["hidden"][4]
    assert "mm1" not in rows            # cube ops are float16 in both modes


def test_compare_with_origin_lists_exactly_the_ops_whose_dtype_changes(files, capsys):
    """Under must_keep_origin_dtype every op is 'unchanged': for this float32 graph that is float32, so only the ops
    mixed_float16 reduces (or computes between casts) differ, not the float32 ones it leaves alone."""
    code, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--compare-mode", "origin")
    assert code == 0
    mixed = expected_report(files["graph_def"], {"precision_mode_v2": "mixed_float16"})
    changed = {r.name for r in mixed.records if r.decision == "float16" or r.emulated}
    assert set(table_rows(out)) == changed
    assert f"{len(changed)} ops decide differently under mixed_float16 and origin" in out


def test_compare_mode_takes_a_v1_only_value_and_drops_the_mixlist_for_it(files, capsys):
    code, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--modify-mixlist",
                       files["mixlist"], "--compare-mode", "allow_fp32_to_fp16")
    assert code == 0
    assert out.splitlines()[1].startswith("NpuOptimizer allow_fp32_to_fp16:")
    assert f"(modify_mixlist {files['mixlist']} only applies to mixed modes" in out
    rows = table_rows(out)
    assert "hidden" not in rows         # black by the mixlist: float32 in both runs
    assert rows["bias1"][2:4] == ["float16", "float32"]


def test_invalid_precision_value_prints_the_sessions_message(files, capsys):
    with pytest.raises(NpuConfigError) as session_error:
        options_from_parameter_map({"precision_mode_v2": "mixed_flot16"})
    code, out, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_flot16")
    assert code == 2 and out == ""
    assert err.strip() == f"npu-report: error: {session_error.value}"
    assert "Did you mean 'mixed_float16'?" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["--precision-mode", "allow_mix_precision", "--precision-mode-v2", "mixed_float16"],
     "'precision_mode' and 'precision_mode_v2' can not be assigned at the same time."),
    (["--precision-mode-v2", "origin", "--modify-mixlist", "MIXLIST"],
     "modify_mixlist is assigned, please ensure that precision_mode_v2 is assigned to"),
    (["--graph-run-mode", "2"], "graph_run_mode value must be 0 or 1"),
    (["--soc", "Ascend999"], "Ascend999"),
    (["--compare-mode", "mixed_flot16"], "--compare-mode mixed_flot16: NpuOptimizer: option precision_mode_v2"),
    (["--op", "hiden"], "--op 'hiden': the graph in 'GRAPH' has no node of that name. Did you mean: hidden"),
])
def test_configuration_errors_exit_2_with_one_line(files, capsys, argv, message):
    argv = [files["mixlist"] if a == "MIXLIST" else a for a in argv]
    code, out, err = run(capsys, files["pb"], *argv)
    assert code == 2 and out == ""
    assert message.replace("GRAPH", files["pb"]) in err
    assert err.startswith("npu-report: error: ") and "Traceback" not in err


def test_bad_files_are_named(files, capsys, tmp_path):
    missing = tmp_path / "no_such_graph.pb"
    code, _, err = run(capsys, missing)
    assert code == 2 and err.strip() == f"npu-report: error: cannot read graph file '{missing}': No such file or " \
                                         "directory"
    code, _, err = run(capsys, files["mixlist"])
    assert code == 2 and f"graph file '{files['mixlist']}' is neither a GraphDef" in err
    not_json = tmp_path / "mixlist.json"
    not_json.write_text('{"black-list": {"to-add": ["Relu"]}  // comment\n}')
    code, _, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--modify-mixlist", not_json)
    assert code == 2 and str(not_json) in err and "JSON has no comments" in err


def test_a_graph_the_pass_cannot_rewrite_exits_1_naming_the_node(capsys, tmp_path):
    graph_def = tf.compat.v1.GraphDef()
    node = graph_def.node.add(name="custom", op="NoSuchNpuOp")
    node.attr["T"].type = tf.float32.as_datatype_enum
    path = tmp_path / "custom.pb"
    path.write_bytes(graph_def.SerializeToString())
    code, out, err = run(capsys, path)
    assert code == 1 and out == ""
    assert "precision pass failed at node 'custom' (op registry)" in err and "NoSuchNpuOp" in err


def test_python_dash_m_runs_the_cli(files, tmp_path):
    out_path = tmp_path / "r.json"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-m", "npu_bridge.report_cli", files["meta"], "--precision-mode-v2",
                           "mixed_float16", "--reduced-only", "--wide", "--json", str(out_path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    report = expected_report(files["graph_def"], {"precision_mode_v2": "mixed_float16"})
    assert done.stdout.splitlines()[0] == report.summary()
    assert set(table_rows(done.stdout)) == {r.name for r in report.reduced()}
    assert json.loads(out_path.read_text())["n_reduced"] == report.n_reduced


def test_customize_dtypes_soc_and_graph_run_mode_reach_the_pass(files, capsys, tmp_path):
    customize = tmp_path / "customize.cfg"
    customize.write_text("hidden::InputDtype:float32,OutputDtype:float32\n")
    code, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--customize-dtypes", customize,
                       "--op", "hidden")
    assert code == 0
    assert "decision  float32" in out and "reason    customize_dtypes line 1 (by name)" in out

    code, out, _ = run(capsys, files["pb"], "--precision-mode-v2", "mixed_bfloat16", "--soc", "Ascend910B3",
                       "--reduced-only")
    assert code == 0
    assert out.startswith("NpuOptimizer mixed_bfloat16: ") and "ops reduced to bfloat16" in out.splitlines()[0]
    assert table_rows(out)["mm1"][:4] == ["MatMul", "MatMulV2", "white", "bfloat16*"]

    code, out, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_bfloat16")
    assert code == 2 and "The AI core doesn't support mixed_bfloat16" in err

    code, out, _ = run(capsys, files["pb"], "--graph-run-mode", "0")
    assert out.startswith("NpuOptimizer force_fp16 (default for graph_run_mode=0): ")


def test_help_and_usage_errors(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "--compare-mode" in out and "GRAPH" in out
    code, _, err = run(capsys, "graph.pb", "--list", "grey")
    assert code == 2 and "invalid choice: 'grey'" in err


def test_op_with_compare_mode_shows_the_other_modes_decision(files, capsys):
    code, out, _ = run(capsys, files["pb"], "--op", "hidden", "--compare-mode", "mixed_float16")
    assert code == 0
    assert "decision  float32" in out
    assert "compare   under mixed_float16: float16. gray list (built-in ascend910: no precision_reduce (gray)): " \
           "follows its float16 producer 'bias1'" in out


def test_strict_turns_a_misspelt_mixlist_op_into_an_error(files, capsys, tmp_path):
    mixlist = tmp_path / "misspelt.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["MatMu1V2"]}}))
    code, _, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--modify-mixlist", mixlist)
    assert code == 0 and "warning:" in err and "MatMu1V2" in err
    code, out, err = run(capsys, files["pb"], "--precision-mode-v2", "mixed_float16", "--modify-mixlist", mixlist,
                         "--strict")
    assert code == 2 and out == "" and "error:" in err and "Did you mean 'MatMulV2'" in err and "strict mode" in err
    assert "NPU_BRIDGE_STRICT" not in os.environ
