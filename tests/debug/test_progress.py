"""suggest's progress display: one line rewritten in place on a terminal, one line per replay in a log, every
line ended by a newline and none printed twice."""
import io

from npu_bridge.debug.progress import Progress
from npu_bridge.debug.suggest import ReplayEvent


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _events():
    yield ReplayEvent(1, 9, "float32 (range pre-pass)", 0, 0.0, True, None)
    yield ReplayEvent(2, 9, "as configured", 0, 3.5, False, (3.5, []))
    yield ReplayEvent(3, 9, "2 ops in float32", 2, 0.001, True, (0.001, ["MatMul", "truediv"]))


def _show(stream):
    progress = Progress(stream)
    progress.line("recording 5 steps of train.py (seed 0)")
    for event in _events():
        progress.replay(event)
    progress.line("verifying")
    progress.replay(ReplayEvent(4, 9, "pruning", 1, 0.002, True, (0.001, ["MatMul"])))
    progress.close()
    return stream.getvalue()


def test_a_log_gets_one_line_per_replay_with_the_bound_and_the_best_so_far():
    lines = _show(io.StringIO()).split("\n")
    assert lines[-1] == "", "the last line ends in a newline"
    lines = lines[:-1]
    assert len(lines) == 6 and len(set(lines)) == 6 and not any("\r" in line for line in lines)
    assert lines[0] == "npu-debug suggest: recording 5 steps of train.py (seed 0)"
    assert lines[3].startswith("npu-debug suggest: replay 3 / bound 9, ")
    assert lines[3].endswith(": 2 ops in float32: worst |metric - float32| 0.001, within tolerance; best so far "
                             "0.001 with 2 ops in float32")
    assert lines[4] == "npu-debug suggest: verifying"
    assert lines[5].endswith("best so far 0.001 with 1 op in float32")


def test_a_terminal_rewrites_one_line_in_place_and_ends_it_before_the_next_event():
    shown = _show(Terminal())
    assert shown.endswith("\n") and not shown.endswith("\n\n")
    first, replays, verifying, last, end = shown.split("\n")
    assert first == "npu-debug suggest: recording 5 steps of train.py (seed 0)" and end == ""
    assert replays.count("\r\033[K") == 3 and replays.startswith("\r\033[Knpu-debug suggest: replay 1 / bound 9")
    assert verifying == "npu-debug suggest: verifying"
    assert last.startswith("\r\033[Knpu-debug suggest: replay 4 / bound 9")
