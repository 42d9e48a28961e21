"""`npu-report diff` on malformed artifacts: the CI gate exits 2 naming the file and the field, never a traceback,
never "nothing changed" and never a failure that looks like a moved decision."""
import json

import pytest

from npu_bridge.report_cli import main as npu_report

RECORD = {"name": "dense/MatMul", "tf_type": "MatMul", "list": "white", "decision": "float16", "emulated": False,
          "reason": "white list", "casts": [], "origin": ""}


def write_run(folder, run=None, report=None):
    """A --report-dir folder as npu-run writes it, with `run` / `report` replacing run.json / the report."""
    folder.mkdir()
    (folder / "graph-1.report.json").write_text(json.dumps(
        {"mode": "mixed_float16", "soc": "ascend910", "records": [RECORD]} if report is None else report))
    (folder / "run.json").write_text(json.dumps(run if run is not None else {
        "format": "npu_bridge-run/1", "graphs": {"graph-1": {
            "report": "graph-1.report.json", "curves": {"loss:0": [[0, 1.5], [1, 1.25], [2, "nan"]]}}}}))
    return str(folder)


def diff_of(tmp_path, capsys, **new):
    base = write_run(tmp_path / "base")
    code = npu_report(["diff", base, write_run(tmp_path / "new", **new)])
    captured = capsys.readouterr()
    return code, captured.err, captured.out


def run_with(graph_entry=None, **top):
    content = {"format": "npu_bridge-run/1", "graphs": {"graph-1": {
        "report": "graph-1.report.json", "curves": {"loss:0": [[0, 1.5]]}, **(graph_entry or {})}}}
    content.update(top)
    return content


def test_well_formed_runs_diff_clean(tmp_path, capsys):
    code, err, out = diff_of(tmp_path, capsys)
    assert code == 0 and err == "" and "no decision or loss-curve changes" in out


@pytest.mark.parametrize("run, field", [
    (run_with({"curves": {"loss:0": [[0, "1.5"]]}}), "graphs.graph-1.curves.loss:0[0] has value '1.5'"),
    (run_with(graphs=["graph-1"]), "graphs is a list, expected an object"),
    (run_with({"curves": {"loss:0": [1.5, 1.25]}}), "graphs.graph-1.curves.loss:0[0] is the number 1.5"),
    (run_with({"curves": {"loss:0": [["0", 1.5]]}}), "graphs.graph-1.curves.loss:0[0] has step '0'"),
    (run_with({"curves": [["loss:0"]]}), "graphs.graph-1.curves is a list"),
    (run_with({"report": 3}), "graphs.graph-1.report is the number 3"),
    (run_with(format="npu_bridge-run/99"), "has format 'npu_bridge-run/99': this npu-report reads 'npu_bridge-run/1'"),
    ({"graphs": {}}, "has no \"format\" field"),
])
def test_a_malformed_run_record_is_exit_2_naming_the_file_and_the_field(tmp_path, capsys, run, field):
    code, err, out = diff_of(tmp_path, capsys, run=run)
    assert code == 2, (err, out)
    assert str(tmp_path / "new" / "run.json") in err and field in err
    assert "Traceback" not in err and out == ""


def test_per_op_records_without_a_decision_are_exit_2_naming_the_op(tmp_path, capsys):
    record = {key: value for key, value in RECORD.items() if key != "decision"}
    code, err, _ = diff_of(tmp_path, capsys, report={"records": [record]})
    assert code == 2
    assert str(tmp_path / "new" / "graph-1.report.json") in err
    assert "records[0] (op 'dense/MatMul') has no 'decision'" in err


def test_a_report_that_is_not_an_object_or_lacks_records_is_exit_2(tmp_path, capsys):
    code, err, _ = diff_of(tmp_path, capsys, report=[RECORD])
    assert code == 2 and "graph-1.report.json' holds a list, expected a per-op report" in err
    new = tmp_path / "new" / "graph-1.report.json"
    new.write_text(json.dumps({"mode": "mixed_float16"}))
    assert npu_report(["diff", str(tmp_path / "base"), str(tmp_path / "new")]) == 2
    assert f"'{new}' has no \"records\" field" in capsys.readouterr().err


def test_a_run_json_that_is_a_directory_is_named_as_unreadable(tmp_path, capsys):
    base = write_run(tmp_path / "base")
    new = tmp_path / "new"
    (new / "run.json").mkdir(parents=True)
    assert npu_report(["diff", base, str(new)]) == 2
    err = capsys.readouterr().err
    assert f"cannot read '{new / 'run.json'}'" in err and "Is a directory" in err


def test_a_report_the_run_record_names_but_that_is_missing_is_exit_2(tmp_path, capsys):
    base = write_run(tmp_path / "base")
    new = write_run(tmp_path / "new")
    (tmp_path / "new" / "graph-1.report.json").unlink()
    assert npu_report(["diff", base, new]) == 2
    assert f"cannot read '{tmp_path / 'new' / 'graph-1.report.json'}'" in capsys.readouterr().err
