"""The run observer that writes the per-graph reports and the run record (see npu_bridge.artifacts)."""
import atexit
import dataclasses
import enum
import json
import math
import platform
import sys
import threading
import weakref
from importlib import metadata
from pathlib import Path

import numpy as np

from npu_bridge.artifacts import events, loss_scaling
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.runtime.observers import RunObserver
from npu_bridge.settings import REPORT_DIR_ENV, prepare_report_dir

RUN_FILE = "run.json"
RUN_FORMAT = "npu_bridge-run/1"


def report_file(index):
    """The stable file name of the index-th (from 1) emulated graph's report."""
    return f"graph-{index}.report.json"


class ArtifactWriter(RunObserver):
    """Keeps one entry per emulated session (its graph's report, options, loss curves) and writes them to a folder.

    Reports are written when a session builds or extends its program (rarely); curve values are kept in memory
    (a float per step) and the run record is written at exit, so steps cost a dictionary update, not a file write.
    """

    def __init__(self, folder):
        self.folder = Path(folder).absolute()     # the script may change directory
        problem = prepare_report_dir(self.folder)
        try:
            for stale in [*self.folder.glob("graph-*.report.json"), self.folder / RUN_FILE]:
                stale.unlink(missing_ok=True)
            events.remove(self.folder / events.FOLDER)
        except OSError as err:
            problem = problem or f"cannot replace the earlier run's '{err.filename}': {err.strerror or err}"
        if problem:
            raise NpuConfigError(f"report directory ({REPORT_DIR_ENV} / npu-run --report-dir): {problem}")
        self._lock = threading.Lock()
        self._entries = []                              # one dict per emulated session, in order (run_record)
        self._by_session = weakref.WeakKeyDictionary()  # EmulatedSession -> its entry, without keeping it alive
        self._scalings = weakref.WeakKeyDictionary()    # Plan -> the loss scalings its steps update
        # Written when the interpreter ends normally (as after npu-run's script, whatever its exit code).
        atexit.register(self._write_at_exit)

    def program_ready(self, emulation, program):
        report = program.result.report
        with self._lock:
            entry = self._entry(emulation)
            entry["summary"] = report.summary()
            (self.folder / entry["report"]).write_text(report.to_json(), encoding="utf-8")

    def before_step(self, emulation, plan, step):
        return [name for _, scale, finite in self._loss_scalings(emulation, plan) for name in (scale, finite)]

    def after_step(self, record):
        scalars = _scalar_float_fetches(record)
        scalings = self._loss_scalings(record.emulation, record.plan)
        if not scalars and not scalings:
            return
        with self._lock:
            entry = self._entry(record.emulation)
            owners = entry["_curve_owner"]
            for name, value in scalars:
                key = owners.setdefault((name, record.plan.signature), _curve_key(name, owners))
                entry["curves"].setdefault(key, []).append([record.step, value])
            for scaling, scale, finite in scalings:
                key = owners.setdefault((scaling.name, record.plan.signature, "scale"),
                                        _curve_key(scaling.name, owners, "scale"))
                entry.setdefault("loss_scale", {}).setdefault(key, []).append(
                    [record.step, float(record.extra[scale])])
                skipped = entry.setdefault("skipped_steps", {}).setdefault(key, [])
                if not bool(record.extra[finite]):
                    skipped.append(record.step)

    def _loss_scalings(self, emulation, plan):
        """(LossScaling, inner scale name, inner flag name) of the loss scalings a step of `plan` updates."""
        found = self._scalings.get(plan)
        if found is None:
            tensor_map = plan.program.result.tensor_map
            found = self._scalings[plan] = tuple(
                (scaling, _inner(tensor_map, scaling.scale), _inner(tensor_map, scaling.finite))
                for scaling in loss_scaling.run_by(emulation.graph, plan.mapper.unique_fetches()))
        return found

    def _entry(self, emulation):
        entry = self._by_session.get(emulation)
        if entry is None:
            options = emulation.options
            entry = self._by_session[emulation] = {
                "report": report_file(len(self._entries) + 1), "summary": "", "mode": options.mode_name,
                "soc": options.soc, "options": _jsonable(options), "curves": {}, "_curve_owner": {}}
            self._entries.append(entry)
        return entry

    def run_record(self):
        """The run record as a JSON-ready dict."""
        with self._lock:
            graphs = {e["report"].split(".")[0]: {k: v for k, v in e.items() if not k.startswith("_")}
                      for e in self._entries}
        return {"format": RUN_FORMAT, "command": list(sys.argv), "versions": _versions(), "graphs": graphs}

    def write_run_record(self):
        record = self.run_record()
        (self.folder / RUN_FILE).write_text(json.dumps(record, indent=1), encoding="utf-8")
        events.write(self.folder / events.FOLDER, record["graphs"])

    def _write_at_exit(self):
        """The run record at interpreter exit: a failure there is one line on stderr, not an atexit traceback."""
        try:
            self.write_run_record()
        except OSError as err:
            print(f"npu_bridge: cannot write the run record '{self.folder / RUN_FILE}': {err.strerror or err}",
                  file=sys.stderr)

    def close(self):
        """Write the run record now rather than at exit (for callers that stop observing before the end)."""
        atexit.unregister(self._write_at_exit)
        self.write_run_record()


def _inner(tensor_map, name):
    """The inner tensor holding user tensor `name` (the pass may have moved it behind a Cast)."""
    return tensor_map[name].name if name in tensor_map else name


def _curve_key(name, owners, kind="curve"):
    """A fetch's curve key: its tensor name; the same tensor fetched by another fetch list gets "name@2", ...

    Step numbers count per fetch-and-feed signature, so each signature's values form a curve of their own.
    Loss-scale curves (kind "scale") are numbered apart from fetched curves.
    """
    taken = sum(1 for owner in owners if owner[0] == name and (owner[2:] or ("curve",))[0] == kind)
    return name if taken == 0 else f"{name}@{taken + 1}"


def _scalar_float_fetches(record):
    """(user tensor name, float) for each fetched scalar floating-point value of this step."""
    found = []
    for fetch, source in zip(record.plan.mapper.unique_fetches(), record.plan.sources):
        if source is None or source < 0:
            continue
        value = record.results[source]
        if np.ndim(value) == 0 and np.asarray(value).dtype.kind == "f":
            number = float(value)
            found.append((fetch.name, number if math.isfinite(number) else str(number)))
    return found


def _versions():
    def version(package):
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    import tensorflow as tf

    return {"npu_bridge": version("npu_bridge"), "tensorflow": tf.__version__, "python": platform.python_version(),
            "numpy": np.__version__, "protobuf": version("protobuf")}


def _jsonable(value):
    """NpuOptions (dataclasses, enums, mapping proxies, bytes, tuples) as plain JSON values."""
    if dataclasses.is_dataclass(value):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name.lower()
    if hasattr(value, "items"):
        return {str(k): _jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)

