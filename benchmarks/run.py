"""The benchmark command: `python -m benchmarks.run [--quick]` from the repository root.

Measures in one run (a) rewrite time of our precision pass vs TensorFlow's auto_mixed_precision_cpu pass,
(b) training-step time and (d) peak memory of the emulated session vs plain TensorFlow and TF's AMP session,
(c) per-run overhead of the emulated session, (e) instructions per rewrite, ours vs TF's, under callgrind;
prints the tables and PASS/MISS per target and writes benchmarks/results/<mode>-tf<version>.{json,md,png}.
Every measurement runs in a child process (see child.py).
"""
import argparse
import concurrent.futures
import datetime
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import report
from benchmarks.configs import CONFIGS, is_emulated
from benchmarks.runner import REPO_ROOT, run_child

SETTINGS = {
    "quick": {
        "rewrite_targets": [100, 1000, 10000],
        "rewrite_rounds": 2,
        "rewrite_repeats": 5,
        "rewrite_budget_s": 5.0,
        "step_models": {
            "mlp": {"batch": 32, "hidden": 512},
            "small_cnn": {"batch": 16},
            "resnet50": {"batch": 2, "image": 64, "base_width": 16},
        },
        "step": {"warmup": 1, "min_steps": 5, "max_steps": 20, "budget_s": 0.3},
        "step_rounds": 1,
        "overhead": {"runs": 200, "repeats": 11},
        "overhead_without_npu_bridge": False,
        "first_models": {
            "mlp_stack_2k": ("mlp_stack", {"nodes": 2000}),
            "small_cnn": ("small_cnn", {"batch": 16}),
            "resnet50": ("resnet50", {"batch": 2, "image": 64, "base_width": 16}),
        },
        "first_rounds": 1,
        "cliffs": {"fetch_sets": {"sets": 600, "passes": 2}, "grow": {"nodes": 2000, "additions": 20}},
        "timeout_s": 300,
    },
    "full": {
        "rewrite_targets": [100, 500, 2000, 5000, 10000, 20000],
        "rewrite_rounds": 3,
        "rewrite_repeats": 7,
        "rewrite_budget_s": 10.0,
        "step_models": {
            "mlp": {"batch": 64, "hidden": 1024},
            "small_cnn": {"batch": 32},
            "resnet50": {"batch": 2, "image": 128, "base_width": 64},
        },
        "step": {"warmup": 2, "min_steps": 5, "max_steps": 200, "budget_s": 3.0},
        "step_rounds": 2,
        "overhead": {"runs": 500, "repeats": 41},
        "overhead_without_npu_bridge": True,
        "first_models": {
            "mlp_stack_2k": ("mlp_stack", {"nodes": 2000}),
            "mlp_stack_10k": ("mlp_stack", {"nodes": 10000}),
            "mlp_stack_20k": ("mlp_stack", {"nodes": 20000}),
            "small_cnn": ("small_cnn", {"batch": 32}),
            "resnet50": ("resnet50", {"batch": 2, "image": 128, "base_width": 64}),
        },
        # One round let a burst of load on a shared host double a row (ResNet-50, 1.59 -> 3.03 s, seen once).
        "first_rounds": 3,
        "cliffs": {"fetch_sets": {"sets": 600, "passes": 3}, "grow": {"nodes": 2000, "additions": 60}},
        "timeout_s": 900,
    },
}
PARTS = ("rewrite", "instructions", "step", "overhead", "first", "cliffs")
FAMILIES = ("mlp_stack", "conv_bn_stack")
TF_LOG_ENV = {"TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "meta_optimizer=1"}


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def git_commit(root=REPO_ROOT):
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _side(outcomes, path, nodes):
    """Our or TF's measurement of one graph over all rounds, or the reason there is none.

    The fastest repeat of any round is the side's time; the median is over every warm repeat of every round.
    """
    found = [r for outcome in outcomes for r in outcome.of_kind("rewrite") if r["path"] == path and "min_s" in r]
    if found:
        row = {key: value for key, value in found[0].items() if key not in ("kind", "path")}
        times = [t for r in found for t in r["times_s"]]
        row.update(times_s=times, min_s=min(times), median_s=statistics.median(times), rounds=len(found),
                   nodes_per_s=nodes / min(times))
        if "wall_median_s" in row:
            row["wall_median_s"] = statistics.median([r["wall_median_s"] for r in found])
        return row
    outcome = outcomes[0]
    if outcome.of_kind("unavailable"):
        return {"error": "not available: " + outcome.of_kind("unavailable")[0]["reason"]}
    failed = [r for r in outcome.of_kind("rewrite") if r["path"] == path]
    if failed:
        return {"error": failed[0]["error"]}
    unfinished = outcome.unfinished
    if unfinished and unfinished["path"] == path:
        return {"error": f"crashed: {outcome.failure}"}
    if outcome.failure:
        return {"error": f"not reached: child ended with {outcome.failure}"}
    return {"error": "no result"}


def bench_rewrite(settings, work_dir, results):
    families = {family: settings["rewrite_targets"] for family in FAMILIES}
    log(f"building rewrite graphs {families}")
    built = run_child("build_graphs", {"families": families, "out_dir": work_dir}, timeout_s=settings["timeout_s"])
    if built.of_kind("environment"):
        env = dict(built.of_kind("environment")[0])
        env.pop("kind")
        results["meta"]["environment"] = env
    graphs = built.of_kind("graph")
    if built.failure:
        results["meta"]["problems"].append(f"building rewrite graphs: {built.failure}\n{built.stderr_tail}")
    paths = [g["path"] for g in sorted(graphs, key=lambda g: g["nodes"])]  # small graphs before the heap grows
    spec = {"paths": paths, "repeats": settings["rewrite_repeats"], "budget_s": settings["rewrite_budget_s"]}
    # The two passes run in alternating rounds, so that a machine that slows down or speeds up over minutes (a
    # shared host) weighs on both sides alike instead of on whichever ran second.
    outcomes = {"ours": [], "tf": []}
    for round_index in range(settings["rewrite_rounds"]):
        for side in ("ours", "tf") if round_index % 2 == 0 else ("tf", "ours"):
            where = f"(round {round_index + 1}/{settings['rewrite_rounds']})"
            if side == "ours":
                log(f"timing our precision pass on {len(paths)} graphs {where}")
                outcomes[side].append(run_child("rewrite_ours", {**spec, "mode": "mixed_float16"},
                                                timeout_s=settings["timeout_s"]))
            else:
                log(f"timing TensorFlow's auto_mixed_precision_cpu on the same graphs {where}")
                outcomes[side].append(run_child("rewrite_tf", spec, timeout_s=settings["timeout_s"], env=TF_LOG_ENV))
    for graph in graphs:
        row = {"family": graph["family"], "depth": graph["depth"], "nodes": graph["nodes"], "path": graph["path"],
               "ours": _side(outcomes["ours"], graph["path"], graph["nodes"]),
               "tf": _side(outcomes["tf"], graph["path"], graph["nodes"])}
        if row["ours"].get("min_s") and row["tf"].get("min_s"):
            row["ratio"] = row["ours"]["min_s"] / row["tf"]["min_s"]
        results["rewrite"].append(row)
    for outcome in outcomes["ours"] + outcomes["tf"]:
        if outcome.failure:
            results["meta"]["problems"].append(f"{outcome.task}: {outcome.failure}\n{outcome.stderr_tail}")
    results["scaling"] = {
        family: {side: report.scaling_exponent([(r["nodes"], r[side].get("min_s"))
                                                for r in results["rewrite"] if r["family"] == family])
                 for side in ("ours", "tf")}
        for family in families}


def _step_row(model, config, size, outcome):
    row = {"model": model, "config": config, "size": size}
    if outcome.of_kind("step"):
        row.update({k: v for k, v in outcome.of_kind("step")[0].items() if k != "kind"})
    elif outcome.of_kind("start"):
        row["nodes"] = outcome.of_kind("start")[0]["nodes"]
    if outcome.failure:
        row["failure"] = outcome.failure
        row["stderr_tail"] = outcome.stderr_tail
    elif row.get("emulated") is False:
        row["failure"] = row["emulation"]
    return row


def bench_step(settings, results):
    """Each (model, configuration) in its own process; in full mode every configuration runs in several rounds
    (round-robin, so a burst of load from other processes hits one round, not one configuration) and the round
    with the lowest median step time is kept."""
    for model, size in settings["step_models"].items():
        best = {}
        for round_index in range(settings["step_rounds"]):
            for config in CONFIGS:
                if best.get(config, {}).get("failure"):
                    continue  # crashes and missing emulation are deterministic: one round records them
                log(f"step time: {model} under {config} (round {round_index + 1}/{settings['step_rounds']})")
                spec = {"model": model, "size": size, "config": config, **settings["step"]}
                row = _step_row(model, config, size, run_child("step", spec, timeout_s=settings["timeout_s"]))
                _keep_fastest(best, config, row, "median_s", "round_medians_s")
        rows = [best[config] for config in CONFIGS]
        plain = best["plain_fp32"] if best["plain_fp32"].get("median_s") else None
        for row in rows:
            if plain and row.get("median_s") and not row.get("failure"):
                row["ratio"] = row["median_s"] / plain["median_s"]
                row["rss_ratio"] = row["peak_rss_mb"] / plain["peak_rss_mb"]
        results["step"].extend(rows)
        log(f"step time: {model}, saturation against INF/NaN mode (one process, alternating steps)")
        outcome = run_child("saturation", {"model": model, "size": size, **settings["step"]},
                            timeout_s=settings["timeout_s"])
        found = outcome.of_kind("saturation")
        results["saturation"].append({k: v for k, v in found[0].items() if k != "kind"} if found else
                                     {"model": model, "failure": outcome.failure or "no result"})


def _keep_fastest(best, key, row, time_key, rounds_key):
    """Keep in best[key] the round with the shortest row[time_key] (a failed round only until one succeeds); the
    kept row lists every round's time under rounds_key."""
    kept = best.get(key)
    row[rounds_key] = (kept or {}).get(rounds_key, []) + [row.get(time_key)]
    if kept is None or (row.get(time_key) and not row.get("failure") and
                        (kept.get("failure") or row[time_key] < kept[time_key])):
        best[key] = row
    else:
        kept[rounds_key] = row[rounds_key]


def _trees(before):
    """(label, source tree) pairs the emulated configurations run in: this checkout, and --before's if given."""
    return [("after", None), ("before", before)] if before else [("now", None)]


def bench_first(settings, results, before=None):
    """Time to first step, each (model, configuration[, tree]) in a fresh process, configurations interleaved
    round-robin; the round with the shortest time is kept. Plain float32 and TF's AMP session run once per
    round (they do not depend on the tree); the emulated configurations run in each tree."""
    for label, (model, size) in settings["first_models"].items():
        best = {}
        for round_index in range(settings["first_rounds"]):
            for config in CONFIGS:
                trees = _trees(before) if is_emulated(config) else [("now", None)]
                for tree, root in trees:
                    key = (config, tree)
                    if best.get(key, {}).get("failure"):
                        continue
                    log(f"time to first step: {label} under {config} [{tree}] "
                        f"(round {round_index + 1}/{settings['first_rounds']})")
                    outcome = run_child("first_step", {"model": model, "size": size, "config": config},
                                        timeout_s=settings["timeout_s"], root=root)
                    row = {"model": label, "config": config, "tree": tree}
                    if outcome.of_kind("first_step"):
                        row.update({k: v for k, v in outcome.of_kind("first_step")[0].items()
                                    if k not in ("kind", "model", "config")})
                    if outcome.failure:
                        row.update(failure=outcome.failure, stderr_tail=outcome.stderr_tail)
                    elif row.get("emulated") is False:
                        row["failure"] = row["emulation"]
                    _keep_fastest(best, key, row, "total_s", "round_totals_s")
        plain = best.get(("plain_fp32", "now"), {})
        for row in best.values():
            if plain.get("total_s") and row.get("total_s") and not row.get("failure"):
                row["ratio"] = row["total_s"] / plain["total_s"]
        results["first"].extend(best.values())


def bench_cliffs(settings, results, before=None):
    """The two cliffs of issue 16 item 5, plain against emulated (mixed_float16): cycling more fetch sets than
    the plan cache held, and a script that adds an op and runs it, again and again."""
    for cliff, spec in settings["cliffs"].items():
        for tree, root, emulated in [("now", None, False)] + [(t, r, True) for t, r in _trees(before)]:
            log(f"cliff {cliff}: {'emulated' if emulated else 'plain'} [{tree}]")
            outcome = run_child(f"cliff_{cliff}", {**spec, "emulated": emulated}, timeout_s=settings["timeout_s"],
                                root=root)
            row = {"cliff": cliff, "tree": tree, "emulated": emulated, **spec}
            if outcome.of_kind("cliff"):
                row.update({k: v for k, v in outcome.of_kind("cliff")[0].items() if k != "kind"})
            if outcome.failure:
                row.update(failure=outcome.failure, stderr_tail=outcome.stderr_tail)
            results["cliffs"].append(row)
    plain = {row["cliff"]: row.get("per_run_s") for row in results["cliffs"] if not row["emulated"]}
    for row in results["cliffs"]:
        if row["emulated"] and row.get("per_run_s") and plain.get(row["cliff"]):
            row["ratio"] = row["per_run_s"] / plain[row["cliff"]]


# The pass's own function in TensorFlow: valgrind counts instructions only inside it (and what it calls).
TF_PASS_FUNCTION = "*AutoMixedPrecision::Optimize*"


def _callgrind_total(path):
    """The instruction total a callgrind output file records (its `totals:` line), or None.

    Its `summary:` header reads 0 when instrumentation starts switched off, so only `totals:` counts."""
    try:
        with open(path) as f:
            totals = [line for line in f if line.startswith("totals:")]
    except OSError:
        return None
    return int(totals[-1].split()[1]) if totals else None


def _count_instructions(settings, work_dir, path, side):
    out_file = os.path.join(work_dir, f"callgrind-{side}-{os.path.basename(path)}.out")
    prefix = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_file}"]
    if side == "tf":
        prefix.append(f"--toggle-collect={TF_PASS_FUNCTION}")
    outcome = run_child("instructions", {"path": path, "side": side}, timeout_s=settings["timeout_s"], prefix=prefix)
    total = None if outcome.failure else _callgrind_total(out_file)
    if total is None:
        return {"error": outcome.failure or "callgrind wrote no total"}
    return {"instructions": total}


def bench_instructions(settings, work_dir, results):
    """Instructions executed by one warm rewrite, ours and TensorFlow's pass, on the ~10k-node graphs.

    Unlike time, an instruction count does not depend on what else the machine is doing: it shows a 1% change
    of the pass on a shared host where repeated timings of the same code differ by 30%.
    """
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    if missing:
        results["meta"]["problems"].append(f"instructions: {', '.join(missing)} not found (Debian package valgrind)")
        return
    graphs = [row for row in results["rewrite"] if report.AROUND_10K[0] <= row["nodes"] <= report.AROUND_10K[1]]
    if not graphs:
        built = run_child("build_graphs", {"families": {family: [10_000] for family in FAMILIES},
                                           "out_dir": work_dir}, timeout_s=settings["timeout_s"])
        graphs = built.of_kind("graph")
    for graph in graphs:
        log(f"counting instructions of both passes on {graph['family']} ({graph['nodes']} nodes) under callgrind")
        with concurrent.futures.ThreadPoolExecutor(2) as pool:    # counts do not depend on load: run side by side
            ours, tf = pool.map(lambda side: _count_instructions(settings, work_dir, graph["path"], side),
                                ("ours", "tf"))
        row = {"family": graph["family"], "nodes": graph["nodes"], "ours": ours, "tf": tf}
        if ours.get("instructions") and tf.get("instructions"):
            row["ratio"] = ours["instructions"] / tf["instructions"]
        results["instructions"].append(row)


def profile_misses(settings, results, out_dir, prefix):
    """cProfile (and TensorFlow per-op times) of the parts whose target was missed, for the owners to act on."""
    missed = {t["target"] for t in results["targets"] if t["status"] == "MISS"}
    if missed & {"rewrite", "rewrite_10k"}:
        for family in sorted({row["family"] for row in results["rewrite"] if row.get("ratio")}):
            largest = max((row for row in results["rewrite"] if row["family"] == family and row.get("ratio")),
                          key=lambda row: row["nodes"])
            log(f"profiling our rewrite of {family} ({largest['nodes']} nodes)")
            name = f"{prefix}-profile-rewrite-{family}.txt"
            outcome = run_child("rewrite_ours", {"paths": [largest["path"]], "repeats": 1, "mode": "mixed_float16",
                                                 "profile_path": os.path.join(out_dir, name)},
                                timeout_s=settings["timeout_s"])
            _note_profile(results, outcome, [name])
    if missed & {"step", "memory"}:
        candidates = [r for r in results["step"] if r["config"] == "npu_mixed_float16" and r.get("ratio")]
        worst = max(candidates, key=lambda r: r["ratio"])
        names = [f"{prefix}-profile-step-{worst['model']}-first.txt", f"{prefix}-profile-step-{worst['model']}-steps.txt"]
        log(f"profiling the emulated mixed_float16 session on {worst['model']}")
        outcome = run_child("step_profile", {"model": worst["model"], "size": worst["size"],
                                             "config": "npu_mixed_float16", "steps": 10,
                                             "first_path": os.path.join(out_dir, names[0]),
                                             "steps_path": os.path.join(out_dir, names[1])},
                            timeout_s=settings["timeout_s"])
        _note_profile(results, outcome, names)


def _note_profile(results, outcome, names):
    if outcome.failure:
        results["meta"]["problems"].append(f"{outcome.task} (profile): {outcome.failure}\n{outcome.stderr_tail}")
    else:
        results["profiles"].extend(names)


def bench_overhead(settings, results):
    """Paired emulated/plain timings in one process; in full mode also a plain session in a process that never
    imports npu_bridge (the cost of the Session patch for sessions that do not use the NPU)."""
    measured = {}
    for emulated in (True, False)[:2 if settings["overhead_without_npu_bridge"] else 1]:
        log(f"wrapper overhead: {'emulated and plain sessions' if emulated else 'plain session, no npu_bridge'}")
        outcome = run_child("overhead", {"emulated": emulated, **settings["overhead"]},
                            timeout_s=settings["timeout_s"])
        if outcome.failure or not outcome.of_kind("overhead"):
            results["overhead"] = {"failure": f"{'emulated' if emulated else 'plain'} run: {outcome.failure}",
                                   "stderr_tail": outcome.stderr_tail}
            return
        measured[emulated] = outcome.of_kind("overhead")[0]
    if not measured[True]["emulated_ok"]:
        results["overhead"] = {"failure": measured[True]["emulation"]}
        return
    results["overhead"] = {
        "plain_us": measured[True]["plain_us"], "emulated_us": measured[True]["emulated_us"],
        "overhead_us": measured[True]["overhead_us"], "plain_callable_us": measured[True]["plain_callable_us"],
        "over_callable_us": measured[True]["over_callable_us"],
        "plain_samples_us": measured[True]["plain_samples_us"],
        "emulated_samples_us": measured[True]["emulated_samples_us"],
        "emulation": measured[True]["emulation"], **settings["overhead"]}
    if False in measured:
        results["overhead"]["plain_without_npu_bridge_us"] = measured[False]["plain_us"]
        results["overhead"]["plain_without_npu_bridge_samples_us"] = measured[False]["plain_samples_us"]


def at_least(low):
    """An argparse type: an integer no smaller than `low`, refused with argparse's usage message otherwise."""
    def parse(text):
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{text} is below {low}")
        return value
    parse.__name__ = f"integer >= {low}"
    return parse


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small graphs and models: < 3 minutes on 2 cores")
    parser.add_argument("--only", action="append", choices=PARTS, help="run only this part (repeatable)")
    parser.add_argument("--profile", action="store_true",
                        help="profile the missed targets in quick mode too (full mode always does)")
    parser.add_argument("--before", metavar="DIR",
                        help="also run the time-to-first-step and cliff parts' emulated rows in DIR, a checkout of an "
                             "earlier commit holding this benchmarks/ directory (rows 'before' and 'after')")
    parser.add_argument("--out", default=os.path.join(REPO_ROOT, "benchmarks", "results"),
                        help="results directory (default: benchmarks/results)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    mode = "quick" if args.quick else "full"
    settings = SETTINGS[mode]
    parts = args.only or PARTS
    os.makedirs(args.out, exist_ok=True)
    started = time.perf_counter()
    results = {
        "meta": {"mode": mode, "parts": list(parts), "date": datetime.datetime.now(datetime.timezone.utc)
                 .strftime("%Y-%m-%d %H:%M UTC"), "cpu_model": cpu_model(), "git_commit": git_commit(),
                 "command": shlex.join(["python", "-m", "benchmarks.run", *(argv if argv is not None else sys.argv[1:])]),
                 "loadavg_start": [round(x, 2) for x in os.getloadavg()], "settings": settings,
                 "before": args.before, "before_commit": git_commit(args.before) if args.before else None,
                 "environment": {}, "problems": []},
        "rewrite": [], "instructions": [], "step": [], "saturation": [], "overhead": None, "profiles": [],
        "first": [], "cliffs": [],
    }
    with tempfile.TemporaryDirectory(prefix="npu_bridge_bench_") as work_dir:
        if "rewrite" in parts:
            bench_rewrite(settings, work_dir, results)
        if "instructions" in parts:
            bench_instructions(settings, work_dir, results)
        if "step" in parts:
            bench_step(settings, results)
        if "overhead" in parts:
            bench_overhead(settings, results)
        if "first" in parts:
            bench_first(settings, results, args.before)
        if "cliffs" in parts:
            bench_cliffs(settings, results, args.before)
        if not results["meta"]["environment"]:
            environment = run_child("build_graphs", {"families": {}, "out_dir": work_dir}, timeout_s=120)
            results["meta"]["environment"] = {k: v for k, v in (environment.of_kind("environment") or [{}])[0].items()
                                              if k != "kind"}
        prefix = f"{mode}-tf{results['meta']['environment'].get('tensorflow', 'unknown')}"
        results["targets"] = report.evaluate_targets(results)
        if mode == "full" or args.profile:
            profile_misses(settings, results, args.out, prefix)
    for row in results["rewrite"]:
        del row["path"]  # a temporary file, gone now
    results["meta"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    results["meta"]["total_s"] = time.perf_counter() - started
    stem = os.path.join(args.out, prefix)
    if results["rewrite"]:
        plotted = report.plot(results, stem + ".png")
        if plotted:
            results["plot"] = os.path.basename(plotted)
        else:
            results["plot_skipped"] = "matplotlib is not installed"
    report.write_json(results, stem + ".json")
    text = report.markdown(results)
    with open(stem + ".md", "w") as f:
        f.write(text)
    print(text)
    for target in results["targets"]:
        print(f"{target['status']:4}  {target['label']}: {report._fmt(target['value'])} "
              f"(goal <= {target['goal']} {target['unit']})")
    for problem in results["meta"]["problems"]:
        log(f"problem: {problem}")
    log(f"wrote {stem}.json and {stem}.md in {results['meta']['total_s']:.0f} s")


if __name__ == "__main__":
    main()
