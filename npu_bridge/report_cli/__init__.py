"""npu-report: the per-op precision report of a TensorFlow graph, with no session and no NPU.

    npu-report model.pb --precision-mode-v2 mixed_float16            # summary + one row per op
    npu-report graph.meta --precision-mode-v2 mixed_float16 --op dense/MatMul
    npu-report graph.pbtxt --compare-mode mixed_float16                # what mixed_float16 changes vs the default
    npu-report diff ci/baseline out/                                   # the CI gate on two --report-dir runs

Users hunting an accuracy problem need to see, before they have hardware, what a precision setting does to each
op and why. The answer comes from the same pieces a session uses: options_from_parameter_map (so every config
error and warning is the session's own), build_precision_lists and rewrite; this package only reads the graph
file and prints the Report.
"""
import sys
from pathlib import Path

from npu_bridge.console import Command, Tool
from npu_bridge.console import main as console_main

PROG = "npu-report"


def add_report_arguments(parser):
    """`npu-report GRAPH [options]`."""
    parser.add_argument("graph", metavar="GRAPH")
    parser.add_argument("--precision-mode", help="v1 value, e.g. allow_mix_precision, allow_fp32_to_fp16")
    parser.add_argument("--precision-mode-v2", help="v2 value, e.g. mixed_float16, origin")
    parser.add_argument("--modify-mixlist", metavar="FILE")
    parser.add_argument("--customize-dtypes", metavar="FILE")
    parser.add_argument("--soc", help="soc_config, e.g. Ascend910A, Ascend910B3 (default: $NPU_BRIDGE_SOC, "
                                      "else ascend910)")
    parser.add_argument("--graph-run-mode", type=int, help="0 = inference, 1 = training (default 1)")
    parser.add_argument("--json", metavar="OUT", help="write the full report as JSON to OUT")
    parser.add_argument("--list", dest="lists", action="append", choices=("white", "black", "gray"),
                        help="only ops of this list (repeatable)")
    parser.add_argument("--reduced-only", action="store_true", help="only ops computed in the reduced dtype")
    parser.add_argument("--all", action="store_true",
                        help="also ops with no float work (sources, state, ints) and run-once initializer ops")
    parser.add_argument("--wide", action="store_true",
                        help="one line per op, names and reasons in full (default: fit 120 columns)")
    parser.add_argument("--op", dest="ops", action="extend", nargs="+", metavar="NAME",
                        help="explain these ops in full instead of printing the table (with --compare-mode: "
                             "and their decision in the other mode)")
    parser.add_argument("--strict", action="store_true",
                        help="configuration warnings are errors (exit 2), as with NPU_BRIDGE_STRICT=1")
    parser.add_argument("--compare-mode", metavar="MODE",
                        help="run again with this precision mode (v2 value, or a v1-only one such as "
                             "allow_fp32_to_fp16) and list the ops whose decision differs")


def add_diff_arguments(parser):
    """`npu-report diff BASE NEW [options]`."""
    from npu_bridge.artifacts import diff as artifact_diff

    parser.epilog = ("Refresh a baseline by running the script again with --report-dir pointing at it and "
                     "committing the folder.")
    parser.add_argument("base", metavar="BASE")
    parser.add_argument("new", metavar="NEW")
    parser.add_argument("--rtol", type=float, default=artifact_diff.DEFAULT_RTOL,
                        help="relative loss-curve tolerance per step (default %(default)g)")
    parser.add_argument("--atol", type=float, default=artifact_diff.DEFAULT_ATOL,
                        help="absolute loss-curve tolerance per step (default %(default)g)")
    parser.add_argument("--max-skip-rate", type=float, default=artifact_diff.DEFAULT_MAX_SKIP_RATE,
                        help="largest share of steps loss scaling may skip once its scale settled (default "
                             "%(default)g: Ascend's baseline guide)")
    parser.add_argument("--json", metavar="OUT", help="also write the comparison as JSON to OUT")
    parser.add_argument("--junit", metavar="OUT", help="also write it as JUnit XML to OUT (for CI test reports)")
    parser.add_argument("--html", metavar="OUT", help="also write it as one self-contained HTML page to OUT (the "
                                                      "changed decisions, both loss curves on one plot, the verdict)")


def run_diff(args):
    """`npu-report diff BASE NEW`: 0 unchanged, 1 changed, 2 unreadable input or unwritable output."""
    from npu_bridge.artifacts import diff as artifact_diff

    try:
        diffs = artifact_diff.compare(artifact_diff.load(args.base), artifact_diff.load(args.new), args.rtol,
                                      args.atol, args.max_skip_rate)
        for path, text in ((args.json, artifact_diff.to_json), (args.junit, artifact_diff.to_junit),
                           (args.html, lambda d: artifact_diff.to_html(d, args.base, args.new))):
            if path:
                Path(path).write_text(text(diffs), encoding="utf-8")
    except artifact_diff.ArtifactError as err:
        print(f"{PROG} diff: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{PROG} diff: error: cannot write '{err.filename}': {err.strerror or err}", file=sys.stderr)
        return 2
    print(artifact_diff.render_text(diffs))
    return 1 if any(d.failed for d in diffs) else 0


TOOL = Tool(
    PROG, "Per-op Ascend precision report of a TensorFlow graph (GraphDef .pb/.pbtxt or MetaGraphDef .meta), "
          "computed by the same pass an emulated NPU session runs.",
    (Command("", "the per-op precision report of a graph", f"{__name__}:add_report_arguments",
             "npu_bridge.report_cli.report:run"),
     Command("diff", "compare two runs' artifacts (npu-run --report-dir folders, run.json or report JSON files) op "
                     "by op and by loss curve. Exit 0: no change; 1: a decision changed or a curve moved beyond the "
                     "tolerance; 2: unreadable input.", f"{__name__}:add_diff_arguments", f"{__name__}:run_diff")),
    epilog="exit status: 0 report printed; 1 the precision pass failed on this graph; 2 bad arguments or "
           "configuration.")


def main(argv=None):
    """Entry point of `npu-report` and `python -m npu_bridge.report_cli`; returns the exit code."""
    return console_main(TOOL, argv)
