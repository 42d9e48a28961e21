"""The emulation's own log line: the precision summary of each emulated graph, seen once on a normal run.

TensorFlow's logger hides INFO by default, and under tf.app.run / absl prints each line twice (its own handler
and absl's on the root logger). The summary therefore goes to the `npu_bridge` logger: INFO, its own stderr
handler, no propagation. `logging.getLogger("npu_bridge").setLevel(logging.WARNING)` quiets it.
"""
import logging
import sys

logger = logging.getLogger("npu_bridge")


class _StderrHandler(logging.Handler):
    """Writes to sys.stderr as it is at each line, so a stream replaced later (a redirect, pytest) still gets it."""

    def emit(self, record):
        try:
            print(self.format(record), file=sys.stderr)
        except Exception:
            self.handleError(record)


if not logger.handlers:
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("npu_bridge: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def summary(line, first):
    """Log a graph's summary line (the Report's summary and what the session did with the graph).

    first: the graph's first build, shown on a normal run (INFO); later extensions and rebuilds of the same graph
    are DEBUG, so a script that adds ops between runs still sees one line per graph.
    """
    logger.log(logging.INFO if first else logging.DEBUG, line)
