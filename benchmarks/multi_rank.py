"""`python -m benchmarks.multi_rank`: what running as 2 ranks costs on this machine.

(a) training-step time of an MLP on a global batch of 512: one process on the whole batch vs 2 ranks
(`npu-run --ranks 2`) on 256 each with averaged gradients (NPUDistributedOptimizer), the slower rank's median;
(b) the per-all-reduce overhead: median time of a session run of `hccl_ops.allreduce` minus that of an identity
of the same variable, small (1 KiB) and large (16 MiB) tensors, on each rank. Writes
benchmarks/results/multi-rank-tf<version>.md. Both ranks share this machine's cores with each other (and with
anything else running): the ratio shows the emulation's cost, not an NPU cluster's scaling.
"""
import datetime
import json
import os
import re
import subprocess
import sys

import tensorflow as tf

from benchmarks.runner import REPO_ROOT

JOB = os.path.join(REPO_ROOT, "benchmarks", "multi_rank_job.py")


def run(*launcher_args):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for name in ("RANK_SIZE", "RANK_ID", "RANK_TABLE_FILE"):
        environment.pop(name, None)
    done = subprocess.run([sys.executable, "-m", "npu_bridge", *launcher_args, JOB], capture_output=True,
                          text=True, env=environment, timeout=900, cwd=REPO_ROOT)
    if done.returncode:
        raise SystemExit(f"benchmark job failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in re.findall(r"BENCH (.*)$", done.stdout, re.M)]


def report(single, ranks):
    slowest = max(r["step_s"] for r in ranks)
    lines = [
        f"# Multi-rank benchmark (TensorFlow {tf.__version__}, {datetime.date.today()}, "
        f"{os.cpu_count()} cores, load average at end {os.getloadavg()[0]:.1f})",
        "",
        "`python -m benchmarks.multi_rank`; method in benchmarks/README.md#multi-rank.",
        "",
        "| MLP 256-1024-1024-10 training step, global batch 512 | median step | ratio |",
        "|---|---|---|",
        f"| one process, batch 512 | {single['step_s'] * 1e3:.1f} ms | 1.00x |",
        *[f"| rank {r['rank']} of 2, batch 256, gradients all-reduced | {r['step_s'] * 1e3:.1f} ms | "
          f"{r['step_s'] / single['step_s']:.2f}x |" for r in ranks],
        f"| 2 ranks (the slower rank sets the pace) | {slowest * 1e3:.1f} ms | {slowest / single['step_s']:.2f}x |",
        "",
        "| all-reduce (sum, 2 ranks) | rank | run with all-reduce | run with identity | overhead per all-reduce |",
        "|---|---|---|---|---|",
    ]
    for r in ranks:
        for name, (reduced, copied) in r["allreduce"].items():
            lines.append(f"| {name} | {r['rank']} | {reduced * 1e3:.2f} ms | {copied * 1e3:.2f} ms | "
                         f"{(reduced - copied) * 1e3:.2f} ms |")
    return "\n".join(lines) + "\n"


def main():
    single, = run()
    ranks = sorted(run("--ranks", "2"), key=lambda r: r["rank"])
    text = report(single, ranks)
    print(text)
    path = os.path.join(REPO_ROOT, "benchmarks", "results", f"multi-rank-tf{tf.__version__}.md")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"written {path}")


if __name__ == "__main__":
    main()
