"""`npu-run --ranks N script.py args`: N rank processes of one script on this machine, supervised.

Each rank runs `python -m npu_bridge script.py args` with the environment the NPU tooling sets: RANK_SIZE,
RANK_ID, DEVICE_ID and ASCEND_DEVICE_ID (= the rank), RANK_TABLE_FILE (a generated version 1.0 table on
127.0.0.1) and HCCL_IF_BASE_PORT (the first of N free loopback ports); with --report-dir DIR each rank writes
its artifacts to DIR/rank<r>. Output lines are prefixed with
"[rank r] ". If a rank exits with an error or is killed, the others are stopped (SIGTERM, then SIGKILL after
STOP_GRACE_SECONDS) and the launcher exits non-zero naming that rank; Ctrl-C (or SIGTERM) stops every rank the
same way. A rank that hangs without exiting is stopped by its peers' collective timeout (HCCL_EXEC_TIMEOUT).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from npu_bridge.distributed.job import MAX_RANKS
from npu_bridge.distributed.ports import free_base_port
from npu_bridge.distributed.rank_table import rank_table_json
from npu_bridge.settings import REPORT_DIR_ENV

STOP_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.1


def _pump(stream, sink, prefix, lock):
    for line in iter(stream.readline, b""):
        with lock:
            sink.buffer.write(prefix + line)
            sink.buffer.flush()
    stream.close()


def _describe(code):
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class RankProcesses:
    """The N child processes of one job and the threads copying their output."""

    def __init__(self, size, script, args, base_port, table_path):
        self.children = []
        self.threads = []
        lock = threading.Lock()
        for rank in range(size):
            env = dict(os.environ, RANK_SIZE=str(size), RANK_ID=str(rank), DEVICE_ID=str(rank),
                       ASCEND_DEVICE_ID=str(rank), RANK_TABLE_FILE=table_path, HCCL_IF_BASE_PORT=str(base_port),
                       PYTHONUNBUFFERED="1")
            if os.environ.get(REPORT_DIR_ENV):       # one artifact folder per rank: their graphs may differ
                env[REPORT_DIR_ENV] = os.path.join(os.environ[REPORT_DIR_ENV], f"rank{rank}")
            child = subprocess.Popen([sys.executable, "-m", "npu_bridge", script, *args], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            self.children.append(child)
            prefix = f"[rank {rank}] ".encode()
            for stream, sink in ((child.stdout, sys.stdout), (child.stderr, sys.stderr)):
                thread = threading.Thread(target=_pump, args=(stream, sink, prefix, lock), daemon=True)
                thread.start()
                self.threads.append(thread)

    def first_failure(self):
        """(rank, exit code) of a rank that ended with an error, or None."""
        for rank, child in enumerate(self.children):
            code = child.poll()
            if code is not None and code != 0:
                return rank, code
        return None

    def all_done(self):
        return all(child.poll() is not None for child in self.children)

    def stop(self, first_signal=signal.SIGTERM):
        """Signal every running rank, then kill those still running after STOP_GRACE_SECONDS."""
        running = [child for child in self.children if child.poll() is None]
        for child in running:
            _signal_group(child, first_signal)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in running:
            try:
                child.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(child, signal.SIGKILL)
                child.wait()

    def join_output(self):
        for thread in self.threads:
            thread.join(timeout=STOP_GRACE_SECONDS)


def _signal_group(child, sig):
    try:
        os.killpg(child.pid, sig)
    except ProcessLookupError:
        pass


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run_ranks(size, script, args):
    """Run `script` as `size` ranks; the exit code is 0 only if every rank exited with 0."""
    if not 1 <= size <= MAX_RANKS:
        print(f"npu-run: --ranks must be between 1 and {MAX_RANKS} (every rank runs on this machine), got {size}",
              file=sys.stderr)
        return 2
    folder = tempfile.mkdtemp(prefix="npu_run_")
    table_path = os.path.join(folder, "rank_table.json")
    with open(table_path, "w", encoding="utf-8") as handle:
        handle.write(rank_table_json(size))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    ranks = None
    try:
        ranks = RankProcesses(size, script, args, free_base_port(size), table_path)
        while not ranks.all_done():
            failure = ranks.first_failure()
            if failure is not None:
                rank, code = failure
                others = [r for r, c in enumerate(ranks.children) if c.poll() is None]
                print(f"npu-run: rank {rank} {_describe(code)}; stopping the other ranks {others}", file=sys.stderr)
                ranks.stop()
                ranks.join_output()
                return code if code > 0 else 128 - code
            time.sleep(POLL_SECONDS)
        ranks.join_output()
        failure = ranks.first_failure()
        if failure is not None:
            rank, code = failure
            print(f"npu-run: rank {rank} {_describe(code)}", file=sys.stderr)
            return code if code > 0 else 128 - code
        return 0
    except KeyboardInterrupt:
        print("npu-run: interrupted; stopping every rank", file=sys.stderr)
        if ranks is not None:
            ranks.stop(signal.SIGINT)
            ranks.join_output()
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(folder, ignore_errors=True)

