"""`npu-report diff BASE NEW`: what changed between two runs' artifacts, and whether a CI build should fail.

BASE and NEW are each a --report-dir folder (run.json + graph-<n>.report.json), a run.json, or one report JSON
(`npu-report --json`, or a graph-<n>.report.json alone). Graphs pair by file name, ops by name.

It fails (exit 1) when a decision changed: the mode, soc, reduced dtype or overflow mode (where both sides record
it), an op's list, decision or float32-between-casts emulation, an op with float work or a graph present on one
side only, or a loss curve that moved beyond the tolerance at some step (|new - base| > atol + rtol * |base|),
lost steps, or went missing. Reasons, origins and casts that changed alone, and shape-only ops on one side (which
TensorFlow versions build differently), are printed as notes: they explain a change, they are not one. Input
of the wrong shape (schema.py) is an ArtifactError naming the file and the field: exit 2, never a verdict.
Nothing here imports TensorFlow.

Default tolerance (rtol 1e-2, atol 1e-5): a run on another CPU or TensorFlow version may sum float32 in another
order; where the NPU rounds to float16 that can move a value by one float16 step (2^-11 relative, about 5e-4),
and training compounds it over the steps a CI run makes. One per cent stays well above that drift, while the
precision changes the gate exists for change the decisions themselves, which are compared exactly.
"""
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from npu_bridge.artifacts import loss_scale_gate, schema
from npu_bridge.artifacts.schema import DECISION_FIELDS
from npu_bridge.artifacts.writer import RUN_FILE

DEFAULT_RTOL = 1e-2
DEFAULT_ATOL = 1e-5
DEFAULT_MAX_SKIP_RATE = loss_scale_gate.DEFAULT_MAX_SKIP_RATE
NOTE_FIELDS = ("reason", "origin", "casts")


class ArtifactError(ValueError):
    """BASE or NEW cannot be read as artifacts; the message names the file."""


@dataclass
class GraphArtifacts:
    report: dict | None          # Report.to_json() content
    curves: dict                 # curve key -> [[step, value], ...]
    summary: str = ""
    options: dict | None = None
    loss_scale: dict = field(default_factory=dict)      # scale key -> [[step, scale], ...] (loss-scaled steps)
    skipped_steps: dict = field(default_factory=dict)   # scale key -> [step, ...] that loss scaling skipped


@dataclass
class GraphDiff:
    name: str
    changed_ops: list = field(default_factory=list)   # (op name, {field: (base, new)}, failing)
    curve_failures: list = field(default_factory=list)  # sentences
    curve_checks: list = field(default_factory=list)    # (key, sentence) of curves within tolerance
    failures: list = field(default_factory=list)        # graph-level sentences (missing graph, mode changed)
    notes: list = field(default_factory=list)
    summaries: list = field(default_factory=list)       # one line per kind of change, before the per-op lines
    base: GraphArtifacts | None = None
    new: GraphArtifacts | None = None

    @property
    def failed(self):
        return bool(self.failures or self.curve_failures or any(failing for _, _, failing in self.changed_ops))


def load(path):
    """{graph name: GraphArtifacts} of a folder, run.json or report JSON; ArtifactError naming the file and field."""
    path = Path(path)
    if path.is_dir():
        run = path / RUN_FILE
        if run.exists():
            return _load_run(run)
        reports = sorted(path.glob("graph-*.report.json"))
        ranks = sorted((p for p in path.glob("rank*") if p.name[4:].isdigit() and p.is_dir()),
                       key=lambda p: int(p.name[4:]))
        if ranks and not reports:       # npu-run --ranks N --report-dir: one folder per rank
            return {f"{rank.name}/{name}": graph for rank in ranks for name, graph in load(rank).items()}
        if not reports:
            raise ArtifactError(f"'{path}' holds neither {RUN_FILE}, graph-*.report.json files nor rank<r> folders: "
                                "not a --report-dir folder")
        return {p.name.split(".")[0]: GraphArtifacts(_read_report(p), {}) for p in reports}
    content = _read_json(path)
    if isinstance(content, dict) and "graphs" in content:
        return _load_run(path, content)
    if isinstance(content, dict) and "records" in content:
        _checked(path, schema.check_report, content)
        return {path.name.split(".")[0]: GraphArtifacts(content, {})}
    raise ArtifactError(f"'{path}' is neither a run record ({RUN_FILE}) nor a per-op report JSON")


def _load_run(path, content=None):
    content = _read_json(path) if content is None else content
    if not isinstance(content, dict):
        raise ArtifactError(f"'{path}' holds {schema.describe(content)}, expected a run record (an object)")
    graphs = {}
    for name, entry in _checked(path, schema.check_run, content).items():
        report = _read_report(path.parent / entry["report"]) if entry.get("report") else None
        graphs[name] = GraphArtifacts(report, entry["curves"], entry.get("summary", ""), entry.get("options"),
                                      entry.get("loss_scale", {}), entry.get("skipped_steps", {}))
    return graphs


def _read_report(path):
    content = _read_json(path)
    if not isinstance(content, dict):
        raise ArtifactError(f"'{path}' holds {schema.describe(content)}, expected a per-op report (an object)")
    _checked(path, schema.check_report, content)
    return content


def _checked(path, check, content):
    try:
        return check(content)
    except schema.SchemaError as err:
        raise ArtifactError(f"'{path}' {err}" if str(err).startswith("has ") else f"'{path}': {err}") from None


def _read_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise ArtifactError(f"cannot read '{path}': {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ArtifactError(f"'{path}' is not valid JSON: {err}") from None


def compare(base, new, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL, max_skip_rate=DEFAULT_MAX_SKIP_RATE):
    """[GraphDiff] for every graph name on either side, in name order (graph-2 before graph-10; per rank for
    multi-rank folders: rank0/graph-1, rank1/graph-1, ...)."""
    names = sorted(set(base) | set(new), key=_name_order)
    diffs = []
    for name in names:
        diff = GraphDiff(name, base=base.get(name), new=new.get(name))
        if name not in new:
            diff.failures.append(f"{name} ran in the baseline but not in the new run")
        elif name not in base:
            diff.failures.append(f"{name} is new: the baseline has no such graph")
        else:
            _compare_reports(base[name].report, new[name].report, diff)
            _summarize_mixlist(base[name], new[name], diff)
            _compare_curves(base[name].curves, new[name].curves, rtol, atol, diff)
            loss_scale_gate.compare(base[name], new[name], max_skip_rate, diff)
        diffs.append(diff)
    return diffs


def _name_order(name):
    rank, _, graph = name.rpartition("/")
    return (int(rank[4:]) if rank[4:].isdigit() else -1, len(graph), graph)


def _summarize_mixlist(base, new, diff):
    """One line saying what a modify_mixlist change did, before the ops it moved: the file, and the moves counted."""
    before = (base.options or {}).get("modify_mixlist")
    after = (new.options or {}).get("modify_mixlist")
    moves = {}
    for name, changes, _ in diff.changed_ops:
        if "list" in changes and "op" not in changes:
            moves.setdefault(changes["list"], []).append(name)
    by_mixlist = any("modify_mixlist" in str(side) for _, changes, _ in diff.changed_ops if "origin" in changes
                     for side in changes["origin"])
    if before == after and not by_mixlist:
        return
    counted = "; ".join(f"{len(names)} {a} -> {b} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
                        for (a, b), names in sorted(moves.items(), key=lambda item: -len(item[1])))
    files = f"{before or 'none'} -> {after or 'none'}" if before != after else f"{after} (its content)"
    diff.summaries.append(f"modify_mixlist changed: {files}: "
                          f"{sum(map(len, moves.values()))} ops moved list{': ' + counted if counted else ''}")


def _compare_reports(base, new, diff):
    if base is None or new is None:
        if (base is None) != (new is None):
            diff.failures.append("the per-op report is missing on one side")
        return
    for key in ("mode", "soc", "reduced_dtype", "overflow_mode"):
        if key in base and key in new and base[key] != new[key]:
            diff.failures.append(f"{key} {base.get(key)} -> {new.get(key)}")
    base_ops = {r["name"]: r for r in base.get("records", ())}
    new_ops = {r["name"]: r for r in new.get("records", ())}
    for name in [*base_ops, *(n for n in new_ops if n not in base_ops)]:
        before, after = base_ops.get(name), new_ops.get(name)
        if before is None or after is None:
            record = before or after
            side = "only in the new run" if before is None else "only in the baseline"
            diff.changed_ops.append((name, {"op": side, "list": record.get("list"),
                                            "decision": record.get("decision")}, _decides(record)))
            continue
        changes = {key: (before.get(key), after.get(key)) for key in (*DECISION_FIELDS, *NOTE_FIELDS)
                   if before.get(key) != after.get(key)}
        if changes:
            diff.changed_ops.append((name, changes, any(key in changes for key in DECISION_FIELDS)))


def _decides(record):
    """Whether an op present on one side only is a decision: float work the lists or modes rule on. TensorFlow
    versions build some shape-only helpers differently (a Const in one, a Shape op in the other): not a change."""
    return record.get("list") in ("white", "black", "gray") or record.get("decision") != "unchanged"


def _compare_curves(base, new, rtol, atol, diff):
    for key, points in base.items():
        if key not in new:
            diff.curve_failures.append(f"curve {key}: fetched in the baseline, not in the new run")
            continue
        before, after = dict(_points(points)), dict(_points(new[key]))
        missing = sorted(set(before) - set(after))
        if missing:
            diff.curve_failures.append(f"curve {key}: {len(missing)} baseline steps missing from the new run "
                                       f"(first: step {missing[0]})")
        worst, first_bad = 0.0, None
        for step in sorted(set(before) & set(after)):
            a, b = before[step], after[step]
            if math.isnan(a) and math.isnan(b) or a == b:
                continue
            deviation = abs(b - a) if math.isfinite(a) and math.isfinite(b) else math.inf
            worst = max(worst, deviation / max(abs(a), atol) if math.isfinite(deviation) else math.inf)
            if first_bad is None and not deviation <= atol + rtol * abs(a):
                first_bad = (step, a, b)
        if first_bad is not None:
            step, a, b = first_bad
            diff.curve_failures.append(f"curve {key}: step {step} is {b:.6g}, baseline {a:.6g} (beyond rtol {rtol:g}"
                                       f" + atol {atol:g}; largest relative change {worst:.2g})")
        else:
            diff.curve_checks.append((key, f"curve {key}: {len(before)} steps within rtol {rtol:g} + atol {atol:g} "
                                           f"(largest relative change {worst:.2g})"))
        extra = len(set(after) - set(before))
        if extra:
            diff.notes.append(f"curve {key}: {extra} steps beyond the baseline's (not compared)")
    for key in new:
        if key not in base:
            diff.notes.append(f"curve {key}: new in this run (not compared)")


def _points(points):
    for step, value in points:
        yield step, float(value)    # "nan" / "inf" strings as written for non-finite values


def render_text(diffs):
    """The CI log form: one block per graph with its verdict, failing changes first."""
    lines = []
    for diff in diffs:
        failing = [op for op in diff.changed_ops if op[2]]
        lines.append(f"{diff.name}: {'CHANGED' if diff.failed else 'ok'} ({len(failing)} ops decide differently, "
                     f"{len(diff.changed_ops) - len(failing)} with other changes, "
                     f"{len(diff.curve_failures)} curve failures)")
        lines.extend(f"  FAIL {sentence}" for sentence in diff.failures)
        lines.extend(f"  {sentence}" for sentence in diff.summaries)
        for name, changes, is_failing in sorted(diff.changed_ops, key=lambda op: not op[2]):
            text = change_text(changes)
            mark = "FAIL" if is_failing else "note"
            lines.append(f"  {mark} op {name}: {text or 'reason changed'}")
            if "reason" in changes:
                lines.append(f"       reason now: {changes['reason'][1]}")
        lines.extend(f"  FAIL {sentence}" for sentence in diff.curve_failures)
        lines.extend(f"  ok   {sentence}" for _, sentence in diff.curve_checks)
        lines.extend(f"  note {sentence}" for sentence in diff.notes)
    failed = sum(d.failed for d in diffs)
    lines.append(f"npu-report diff: {failed} of {len(diffs)} graphs changed" if failed else
                 f"npu-report diff: no decision or loss-curve changes in {len(diffs)} graphs")
    return "\n".join(lines)


def change_text(changes, with_reason=False):
    if "op" in changes:
        return f"{changes['op']} (list {changes['list']}, decision {changes['decision']})"
    return "; ".join(f"{key} {_cell(a)} -> {_cell(b)}" for key, (a, b) in changes.items()
                     if with_reason or key != "reason")


def _cell(value):
    return str(len(value)) + " casts" if isinstance(value, list) else str(value)


def to_html(diffs, base_label, new_label):
    """One self-contained HTML page of the comparison (html.py)."""
    from npu_bridge.artifacts import html

    return html.to_html(diffs, render_text(diffs).splitlines()[-1], base_label, new_label)


def to_json(diffs):
    return json.dumps({
        "failed": any(d.failed for d in diffs),
        "graphs": [{"name": d.name, "failed": d.failed, "failures": d.failures + d.curve_failures,
                    "ops": [{"name": name, "failing": failing,
                             "changes": {k: list(v) if isinstance(v, tuple) else v for k, v in changes.items()}}
                            for name, changes, failing in d.changed_ops],
                    "curves_within_tolerance": [key for key, _ in d.curve_checks], "notes": d.notes}
                   for d in diffs]}, indent=1)


def to_junit(diffs):
    """JUnit XML: per graph a decisions test case and a test case per compared curve (CI dashboards show them)."""
    suite = ElementTree.Element("testsuite", name="npu-report diff")
    cases = failures = 0
    for diff in diffs:
        case = ElementTree.SubElement(suite, "testcase", classname=diff.name, name="decisions")
        cases += 1
        failing = diff.failures + [f"op {name}: {change_text(changes, with_reason=True)}"
                                   for name, changes, is_failing in diff.changed_ops if is_failing]
        if failing:
            failures += 1
            ElementTree.SubElement(case, "failure", message=failing[0]).text = "\n".join(failing)
        for sentence in diff.curve_failures:
            case = ElementTree.SubElement(suite, "testcase", classname=diff.name, name=sentence.split(":")[0])
            ElementTree.SubElement(case, "failure", message=sentence).text = sentence
            cases, failures = cases + 1, failures + 1
        for key, _ in diff.curve_checks:
            ElementTree.SubElement(suite, "testcase", classname=diff.name, name=f"curve {key}")
            cases += 1
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    return ElementTree.tostring(suite, encoding="unicode")
