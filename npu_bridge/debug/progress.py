"""What suggest shows while it replays: one line rewritten in place on a terminal, one line per event in a log.

A search takes minutes on a real model; without this nothing is printed until it ends. On a terminal the
line shows replays done / bound, the time elapsed and the best replay so far; redirected to a file each event
is its own line, so a CI log reads as a list. Either way every line ends with a newline once done.
"""
import sys
import time


def ops(count):
    """'1 op', '2 ops': the counts suggest prints."""
    return f"{count} op" if count == 1 else f"{count} ops"


class Progress:
    def __init__(self, stream=None, label="npu-debug suggest"):
        self.stream = stream or sys.stderr
        self.label = label
        self.started = time.monotonic()
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self._open = False

    def elapsed(self):
        return time.monotonic() - self.started

    def line(self, text):
        """An event that stays visible (a phase starting, a result): its own line in both modes."""
        self._end_line()
        print(f"{self.label}: {text}", file=self.stream, flush=True)

    def replay(self, event):
        best = ""
        if event.best is not None:
            worst, kept = event.best
            best = f"; best so far {worst:.4g} with {ops(len(kept))} in float32"
        text = (f"replay {event.done} / bound {event.bound}, {self.elapsed():.0f} s: {event.what}: worst "
                f"|metric - float32| {event.worst:.4g}, {'within' if event.within else 'outside'} tolerance{best}")
        if self.terminal:
            print(f"\r\033[K{self.label}: {text}", end="", file=self.stream, flush=True)
            self._open = True
        else:
            print(f"{self.label}: {text}", file=self.stream, flush=True)

    def close(self):
        self._end_line()

    def _end_line(self):
        if self._open:
            print(file=self.stream, flush=True)
            self._open = False
