"""CI artifacts: what the emulated NPU decided and how the loss went, written from unmodified scripts.

`npu-run --report-dir DIR script.py` (or NPU_BRIDGE_REPORT_DIR=DIR with any launcher) registers a run observer
(writer.ArtifactWriter) that writes into DIR:

- `graph-<n>.report.json`: the full per-op Report (Report.to_json) of the n-th emulated session's graph, in the
  order the process first runs them (1, 2, ...), rewritten when the graph grows;
- `run.json`: the run record (RUN_FORMAT): command line, versions (npu_bridge, TensorFlow, Python, numpy,
  protobuf), and per graph its options as resolved, soc, precision summary and the per-step values of every scalar
  float fetch (the loss curve), as [step, value] pairs with the session's step numbers.

The names depend only on the order of the script's sessions, so two runs of one script pair file by file;
`npu-report diff BASE NEW` (diff.py) compares them and is the CI gate. Files of an earlier run in DIR are
replaced, never mixed with the new ones.
"""
from npu_bridge.artifacts.writer import RUN_FILE, RUN_FORMAT, ArtifactWriter, report_file

__all__ = ["ArtifactWriter", "RUN_FILE", "RUN_FORMAT", "report_file", "start"]

_started = {}


def start(report_dir):
    """Write artifacts of every emulated graph this process runs to `report_dir` (once per folder)."""
    from npu_bridge.runtime import observers

    if report_dir not in _started:
        _started[report_dir] = ArtifactWriter(report_dir)
        observers.add_observer(_started[report_dir])
    return _started[report_dir]
