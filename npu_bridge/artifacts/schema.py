"""The shape of a run record and a per-op report, checked before `npu-report diff` reads them.

The diff is a CI gate: input it cannot read must stop it with exit 2 and a message naming the file and the field,
never pass as "nothing changed" or fail as if a decision had moved. Every check here raises SchemaError with the
field's path inside the file (`graphs.graph-1.curves.loss:0[3]`); the caller adds the file's name.
"""
from npu_bridge.artifacts.writer import RUN_FORMAT

DECISION_FIELDS = ("list", "decision", "emulated")
NON_FINITE = ("nan", "inf", "-inf")     # how the writer spells non-finite values (JSON has none)


class SchemaError(ValueError):
    """A field of an artifact file is missing or of the wrong kind; the message names the field."""


def check_run(content):
    """A run.json's content: the known format, graphs an object of entries, curves of [step, value] pairs."""
    found = content.get("format")
    if found != RUN_FORMAT:
        what = "has no \"format\" field" if found is None else f"has format {found!r}"
        raise SchemaError(f"{what}: this npu-report reads {RUN_FORMAT!r} (refresh the baseline with this "
                          "version's npu-run --report-dir)")
    graphs = _expect(content, "graphs", dict, "an object of graph name -> entry")
    for name, entry in graphs.items():
        where = f"graphs.{name}"
        if not isinstance(entry, dict):
            raise SchemaError(f"{where} is {describe(entry)}, expected an object")
        if not isinstance(entry.get("report", ""), str):
            raise SchemaError(f"{where}.report is {describe(entry['report'])}, expected a file name")
        for key, points in _expect(entry, "curves", dict, "an object of curve name -> points", where).items():
            check_points(points, f"{where}.curves.{key}")
        if "loss_scale" in entry:
            for key, points in _expect(entry, "loss_scale", dict, "an object of scale name -> points", where).items():
                check_points(points, f"{where}.loss_scale.{key}")
        if "skipped_steps" in entry:
            for key, steps in _expect(entry, "skipped_steps", dict, "an object of scale name -> steps",
                                      where).items():
                if not (isinstance(steps, list) and all(isinstance(s, int) and not isinstance(s, bool)
                                                        for s in steps)):
                    raise SchemaError(f"{where}.skipped_steps.{key} is {describe(steps)}, expected a list of step "
                                      "numbers")
    return graphs


def check_points(points, where):
    """A curve: a list of [step, value] pairs, step an integer, value a number or "nan" / "inf" / "-inf"."""
    if not isinstance(points, list):
        raise SchemaError(f"{where} is {describe(points)}, expected a list of [step, value] pairs")
    for index, point in enumerate(points):
        if not (isinstance(point, list) and len(point) == 2):
            raise SchemaError(f"{where}[{index}] is {describe(point)}, expected a [step, value] pair")
        step, value = point
        if not isinstance(step, int) or isinstance(step, bool):
            raise SchemaError(f"{where}[{index}] has step {step!r}, expected an integer")
        if not (_is_number(value) or value in NON_FINITE):
            raise SchemaError(f"{where}[{index}] has value {value!r}, expected a number (or one of "
                              f"{', '.join(NON_FINITE)})")


def check_report(content):
    """A per-op report's content: records, each with a name and every field a decision is compared on."""
    records = _expect(content, "records", list, "a list of per-op records")
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise SchemaError(f"records[{index}] is {describe(record)}, expected an object")
        if not isinstance(record.get("name"), str):
            raise SchemaError(f"records[{index}] has no op \"name\"")
        missing = [key for key in DECISION_FIELDS if key not in record]
        if missing:
            raise SchemaError(f"records[{index}] (op {record['name']!r}) has no {', '.join(map(repr, missing))}: "
                              "not a report written by npu-report --json or npu-run --report-dir")
    return records


def _expect(container, key, kind, description, where=""):
    path = f"{where}.{key}" if where else key
    if key not in container:
        raise SchemaError(f"has no \"{path}\" field ({description})")
    value = container[key]
    if not isinstance(value, kind):
        raise SchemaError(f"{path} is {describe(value)}, expected {description}")
    return value


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def describe(value):
    """`a list`, `the string 'abc'`, `the number 3`: what a field holds, for a message."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:40] + "..."
        return f"the string {shown!r}"
    if isinstance(value, bool) or value is None:
        return f"{str(value).lower() if value is not None else 'null'}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return {list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
