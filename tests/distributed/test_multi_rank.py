"""Multi-rank jobs through `npu-run --ranks N` on TensorFlow's distributed runtime: real processes, real collectives.

Each job starts N TensorFlow processes (a few seconds each on a 2-core machine), so every job here runs once per
module and the tests read its output. Every wait has a timeout: a hang fails the test instead of CI.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import mlp_model
from npu_bridge.distributed.launch import STOP_GRACE_SECONDS
from npu_bridge.distributed.ports import free_base_port
from npu_bridge.distributed.rank_table import rank_table_json
from npu_bridge.report_cli import main as npu_report

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "rank_job.py")
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT = 240
# The console script reads its command line before importing TensorFlow; `python -m npu_bridge` would load it
# in the launcher process too.
NPU_RUN = [shutil.which("npu-run")] if shutil.which("npu-run") else [sys.executable, "-m", "npu_bridge"]


def npu_run(*args, env=None, timeout=TIMEOUT):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **(env or {}))
    for name in ("RANK_SIZE", "RANK_ID", "RANK_TABLE_FILE", "DEVICE_ID", "ASCEND_DEVICE_ID"):
        environment.pop(name, None)
    return subprocess.run([*NPU_RUN, *args], capture_output=True, text=True,
                          env=environment, timeout=timeout, cwd=ROOT)


def results(output):
    """{rank: [RESULT dicts in order]} from the launcher's rank-prefixed output."""
    found = {}
    for match in re.finditer(r"^\[rank (\d+)\] RESULT (.*)$", output, re.M):
        found.setdefault(int(match.group(1)), []).append(json.loads(match.group(2)))
    return found


def rank_inputs(size):
    return [np.random.RandomState(rank).uniform(-2, 2, (2 * size, 3)).astype(np.float32) for rank in range(size)]


@pytest.fixture(scope="module")
def two_ranks_report(tmp_path_factory):
    """The two-rank job's --report-dir folder (rank0/, rank1/) beside its per-rank results."""
    folder = tmp_path_factory.mktemp("two_ranks_report")
    done = npu_run("--ranks", "2", "--report-dir", str(folder), JOB, "all")
    assert done.returncode == 0, done.stderr[-3000:]
    found = results(done.stdout)
    assert sorted(found) == [0, 1], done.stdout[-3000:]
    return found, folder


@pytest.fixture(scope="module")
def two_ranks(two_ranks_report):
    return two_ranks_report[0]


@pytest.fixture(scope="module")
def four_ranks():
    done = npu_run("--ranks", "4", JOB, "collectives")
    assert done.returncode == 0, done.stderr[-3000:]
    return results(done.stdout)


def check_collectives(found, size):
    xs = rank_inputs(size)
    for rank in range(size):
        got = found[rank][0]
        np.testing.assert_allclose(got["sum"], np.sum(xs, axis=0), rtol=1e-6)
        np.testing.assert_allclose(got["prod"], np.prod(xs, axis=0), rtol=1e-5)
        np.testing.assert_array_equal(got["max"], np.max(xs, axis=0))
        np.testing.assert_array_equal(got["min"], np.min(xs, axis=0))
        np.testing.assert_allclose(got["half"], np.sum([x.astype(np.float16) for x in xs], axis=0), rtol=2e-3)
        np.testing.assert_array_equal(got["gather"], np.concatenate(xs))
        np.testing.assert_array_equal(got["bcast"], xs[size - 1])
        np.testing.assert_allclose(got["scatter"], np.sum(xs, axis=0)[2 * rank:2 * rank + 2], rtol=1e-6)
        np.testing.assert_array_equal(got["reduce"], np.max(xs, axis=0))
        assert got["dtypes"]["half"] == "float16" and got["dtypes"]["sum"] == "float32"
        if rank % 2 == 0:
            np.testing.assert_allclose(got["evens"], np.sum(xs[::2], axis=0), rtol=1e-6)
    np.testing.assert_array_equal(found[1][0]["received"], xs[0] * 10)
    for rank in range(size):
        pieces = []
        for source in range(size):
            counts = [source + 1 + peer for peer in range(size)]
            start = sum(counts[:rank])
            pieces.append(np.arange(start, start + counts[rank]) + 100 * source)
        np.testing.assert_array_equal(found[rank][0]["alltoallv"], np.concatenate(pieces))


def test_collectives_on_two_ranks_match_numpy(two_ranks):
    check_collectives(two_ranks, 2)


def test_collectives_on_four_ranks_match_numpy(four_ranks):
    check_collectives(four_ranks, 4)


def test_data_parallel_training_equals_one_process_on_the_whole_batch(two_ranks):
    images, labels = mlp_model.dataset(2)
    single = mlp_model.train(images, labels)
    weights = [two_ranks[rank][1]["weights"] for rank in (0, 1)]
    for name, value in single.items():
        np.testing.assert_array_equal(weights[0][name], weights[1][name])
        np.testing.assert_allclose(weights[0][name], value, rtol=1e-5, atol=1e-6)


def test_keras_fit_with_the_distributed_optimizer_and_broadcast_callback_agrees_on_every_rank(two_ranks):
    first, second = (two_ranks[rank][2]["keras_weights"] for rank in (0, 1))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_loss_scaling_skips_the_same_steps_on_every_rank(two_ranks):
    runs = [two_ranks[rank][1] for rank in (0, 1)]
    # Step 2 overflows on rank 1 only: both ranks skip it (global step stays) and halve the scale.
    for run in runs:
        assert run["global_steps"] == [1, 2, 2, 3, 4, 5]
        assert run["loss_scales"] == [1024, 1024, 512, 512, 512, 512]


def test_report_dir_holds_one_folder_per_rank_and_diff_reads_them_rank_by_rank(two_ranks_report, capsys):
    _, folder = two_ranks_report
    assert sorted(p.name for p in folder.iterdir()) == ["rank0", "rank1"]
    for rank in (0, 1):
        record = json.loads((folder / f"rank{rank}" / "run.json").read_text())
        skipped = [steps for graph in record["graphs"].values() for steps in graph.get("skipped_steps", {}).values()]
        assert skipped == [[2]], record      # the step both ranks skip (test_loss_scaling_skips_the_same_steps...)
    assert npu_report(["diff", str(folder), str(folder)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^rank0/graph-1: ok", out, re.M) and re.search(r"^rank1/graph-1: ok", out, re.M), out


def test_a_killed_rank_stops_the_job_with_an_error_naming_it():
    done = npu_run("--ranks", "2", JOB, "fail", "kill")
    ended = time.time()
    assert done.returncode == 128 + 9
    assert "npu-run: rank 1 was killed by SIGKILL; stopping the other ranks [0]" in done.stderr
    killed_at = results(done.stdout)[1][0]["at"]
    assert ended - killed_at < STOP_GRACE_SECONDS + 3      # noticed within 0.1 s, then at most the stop grace


def test_ctrl_c_stops_every_rank():
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    launcher = subprocess.Popen([*NPU_RUN, "--ranks", "2", JOB, "fail", "hang"],
                                env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    pids = []
    try:
        deadline = time.monotonic() + TIMEOUT
        while len(pids) < 2 and time.monotonic() < deadline:
            line = launcher.stdout.readline()
            if " RESULT " in line:
                pids.append(json.loads(line.split(" RESULT ", 1)[1])["pid"])
        assert len(pids) == 2
        launcher.send_signal(signal.SIGINT)
        _, stderr = launcher.communicate(timeout=STOP_GRACE_SECONDS + 10)
    finally:
        launcher.kill()
    assert launcher.returncode == 130
    assert "npu-run: interrupted; stopping every rank" in stderr
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_ranks_started_as_separate_shells_share_a_rank_table_and_name_a_failed_rank(tmp_path):
    """The hardware way: one shell per rank, each with its RANK_ID, one RANK_TABLE_FILE. Rank 1 raises; rank 0's
    next all-reduce fails within HCCL_EXEC_TIMEOUT with an error naming rank 1."""
    table = tmp_path / "rank_table_2p.json"
    table.write_text(rank_table_json(2))
    base = free_base_port(2)
    shells = []
    for rank in (0, 1):
        environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", RANK_SIZE="2", RANK_ID=str(rank),
                           DEVICE_ID=str(rank), RANK_TABLE_FILE=str(table), HCCL_IF_BASE_PORT=str(base),
                           HCCL_EXEC_TIMEOUT="20")   # room for one rank starting slower
        shells.append(subprocess.Popen([sys.executable, "-m", "npu_bridge", JOB, "fail", "raise"], env=environment,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT))
    try:
        outputs = [shell.communicate(timeout=TIMEOUT) for shell in shells]
    finally:
        for shell in shells:
            shell.kill()
    assert shells[1].returncode == 1 and "rank 1 fails on purpose" in outputs[1][1]
    assert shells[0].returncode == 1
    assert f"rank 1 (127.0.0.1:{base + 1}) stopped (its server no longer answers" in outputs[0][1]


def test_an_example_runs_as_two_ranks():
    done = npu_run("--ranks", "2", os.path.join(ROOT, "examples", "tf1_scripts", "lstm_dynamic_rnn.py"))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = re.findall(r"^\[rank (\d)\] lstm loss .* loss_scale (\S+)$", done.stdout, re.M)
    assert sorted(rank for rank, _ in lines) == ["0", "1"]
    assert lines[0][1] == lines[1][1]         # one loss-scale history: the overflow decision is shared
