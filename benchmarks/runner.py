"""Run one child measurement in a fresh Python process and turn every way it can end into data.

A child that is killed by a signal, exits non-zero or times out yields an `Outcome` whose `failure` says so
("SIGSEGV", "exit code 1: ValueError: ...", "timeout after 600 s"); the records it printed before dying are
kept, and `unfinished` names the item it had started but not reported.
"""
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from benchmarks.child import MARK

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Outcome:
    task: str
    records: list = field(default_factory=list)
    failure: str | None = None
    stderr_tail: str = ""
    wall_s: float = 0.0

    def of_kind(self, kind):
        return [r for r in self.records if r.get("kind") == kind]

    @property
    def unfinished(self):
        """The last `start` record not followed by a result: the item the child was on when it died."""
        started = self.of_kind("start")
        if self.failure is None or not started:
            return None
        last = started[-1]
        finished = [r for r in self.records[self.records.index(last) + 1:] if r.get("kind") != "start"]
        return None if finished else last


def _describe_exit(returncode, stderr):
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    last = next((line for line in reversed(stderr.strip().splitlines()) if line.strip()), "")
    return f"exit code {returncode}: {last[:300]}"


def run_child(task, spec, *, timeout_s, env=None, prefix=(), root=None):
    """Run `python -m benchmarks.child task spec` with this interpreter; never raises for a failed child.

    prefix: words put before the interpreter (a valgrind command line, for instruction counts).
    root: the source tree to run in (default this checkout): its npu_bridge and benchmarks are imported first."""
    child_env = dict(os.environ)
    child_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    child_env.update(env or {})
    if root:
        child_env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, child_env.get("PYTHONPATH")]))
    command = [*prefix, sys.executable, "-m", "benchmarks.child", task, json.dumps(spec)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=root or REPO_ROOT, env=child_env, capture_output=True, text=True,
                              timeout=timeout_s)
        stdout, stderr, failure = done.stdout, done.stderr, None
        if done.returncode != 0:
            failure = _describe_exit(done.returncode, stderr)
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else expired.stdout or ""
        stderr = expired.stderr.decode() if isinstance(expired.stderr, bytes) else expired.stderr or ""
        failure = f"timeout after {timeout_s:.0f} s"
    records = [json.loads(line[len(MARK):]) for line in stdout.splitlines() if line.startswith(MARK)]
    tail = "\n".join(stderr.strip().splitlines()[-15:]) if failure else ""
    return Outcome(task, records, failure, tail, time.perf_counter() - start)
