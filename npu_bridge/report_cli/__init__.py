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
import argparse
import difflib
import os
import sys
import warnings
from pathlib import Path

import tensorflow as tf

from npu_bridge.artifacts import diff as artifact_diff
from npu_bridge.core.contract import MIXED_MODES
from npu_bridge.core.errors import STRICT_ENV, NpuConfigError, NpuConfigWarning, PrecisionPassError
from npu_bridge.core.mixlist import build_precision_lists
from npu_bridge.core.options import PRECISION_MODE_V2_VALUES, PRECISION_MODE_VALUES, options_from_parameter_map
from npu_bridge.core.precision import rewrite
from npu_bridge.report_cli.graph_file import GraphFileError, load_graph_def
from npu_bridge.report_cli.render import print_comparison, print_explanation, print_table

PROG = "npu-report"


class UsageError(ValueError):
    """An argument the graph cannot satisfy (an --op name it lacks, an unwritable --json path)."""


def _parameter_map(args, precision=None):
    """The NpuOptimizer parameter_map of a session configured like these arguments (plain python values).

    precision: a (key, value) pair that replaces --precision-mode / --precision-mode-v2 (for --compare-mode).
    """
    params = {}
    if precision is not None:
        key, value = precision
        params[key] = value
    else:
        if args.precision_mode is not None:
            params["precision_mode"] = args.precision_mode
        if args.precision_mode_v2 is not None:
            params["precision_mode_v2"] = args.precision_mode_v2
    for key, value in (("modify_mixlist", args.modify_mixlist), ("customize_dtypes", args.customize_dtypes),
                       ("soc_config", args.soc), ("graph_run_mode", args.graph_run_mode)):
        if value is not None:
            params[key] = value
    return params


def _run_pass(graph_def, params):
    """(options, lists, RewriteResult) exactly as a session with this parameter_map computes them."""
    options = options_from_parameter_map(params)
    lists = build_precision_lists(options)
    return options, lists, rewrite(graph_def, options, lists=lists)


def _compare_run(graph_def, args):
    """(report, note) of the --compare-mode run: a v2 value, else a v1 one (allow_fp32_to_fp16 has no v2 name).

    modify_mixlist is only legal with a mixed mode, so a comparison with a non-mixed mode runs without it and
    the note says so.
    """
    value = args.compare_mode
    v1_only = value in PRECISION_MODE_VALUES and value not in PRECISION_MODE_V2_VALUES
    params = _parameter_map(args, ("precision_mode" if v1_only else "precision_mode_v2", value))
    mixlist = params.pop("modify_mixlist", None)
    note = ""
    try:
        if mixlist is not None:
            if options_from_parameter_map(params).mode in MIXED_MODES:
                params["modify_mixlist"] = mixlist
            else:
                note = f"(modify_mixlist {mixlist} only applies to mixed modes: not used for the {value} run)"
        return _run_pass(graph_def, params)[2].report, note
    except NpuConfigError as err:
        raise NpuConfigError(f"--compare-mode {value}: {err}") from None


def _check_op_names(args, report):
    names = {r.name for r in report.records}
    for name in args.ops or ():
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise UsageError(f"--op '{name}': the graph in '{args.graph}' has no node of that name.{hint}")


def _report(args, out):
    """Everything is computed and checked before the first line is printed, so an error leaves no half output."""
    graph_def = load_graph_def(args.graph)
    options, lists, result = _run_pass(graph_def, _parameter_map(args))
    report = result.report
    other, note = (None, "") if args.compare_mode is None else _compare_run(graph_def, args)
    _check_op_names(args, report)
    if args.json:
        try:
            Path(args.json).write_text(report.to_json(), encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot write JSON report '{args.json}': {err.strerror or err}") from None
    print(report.summary(), file=out)
    for warning in report.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    if args.ops:
        for name in args.ops:
            print_explanation(name, options, lists, result, graph_def, out, other)
    elif other is not None:
        print_comparison(report, other, note, args, graph_def, out)
    else:
        print_table(report, args, out, graph_def)


def _build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG, epilog="npu-report diff BASE NEW compares two runs' artifacts (see npu-report diff --help).",
        description="Per-op Ascend precision report of a TensorFlow graph (GraphDef .pb/.pbtxt or "
                               "MetaGraphDef .meta), computed by the same pass an emulated NPU session runs.")
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
    return parser


def _print_warnings(caught):
    """NpuConfigWarnings once each, as the CLI's own lines; anything else as Python would have shown it."""
    shown = set()
    for warning in caught:
        if not issubclass(warning.category, NpuConfigWarning):
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
        elif str(warning.message) not in shown:
            shown.add(str(warning.message))
            print(f"{PROG}: warning: {warning.message}", file=sys.stderr)


def _build_diff_parser():
    parser = argparse.ArgumentParser(
        prog=f"{PROG} diff", description="Compare two runs' artifacts (npu-run --report-dir folders, run.json or "
        "report JSON files) op by op and by loss curve. Exit 0: no change; 1: a decision changed or a curve moved "
        "beyond the tolerance; 2: unreadable input.",
        epilog="Refresh a baseline by running the script again with --report-dir pointing at it and committing "
               "the folder.")
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
    return parser


def diff_main(argv):
    """`npu-report diff BASE NEW`: 0 unchanged, 1 changed, 2 unreadable input or unwritable output."""
    try:
        args = _build_diff_parser().parse_args(argv)
    except SystemExit as exit_request:
        return exit_request.code
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


def main(argv=None):
    """Entry point of `npu-report` and `python -m npu_bridge.report_cli`; returns the exit code.

    0: report printed; 1: the precision pass failed on this graph; 2: bad arguments or configuration.
    `npu-report diff ...` is the artifacts comparison (diff_main).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["diff"]:
        return diff_main(argv[1:])
    try:
        args = _build_parser().parse_args(argv)
    except SystemExit as exit_request:
        return exit_request.code
    # The pass logs its summary through TensorFlow's logger; the CLI prints it (and each warning once) itself.
    verbosity = tf.compat.v1.logging.get_verbosity()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    strict_before = os.environ.get(STRICT_ENV)
    if args.strict:
        os.environ[STRICT_ENV] = "1"       # restored below: main() is also called in-process (tests, tools)
    code = 0
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NpuConfigWarning)
            try:
                _report(args, sys.stdout)
            except (NpuConfigError, GraphFileError, UsageError) as err:
                print(f"{PROG}: error: {err}", file=sys.stderr)
                code = 2
            except PrecisionPassError as err:
                print(f"{PROG}: error: {err}", file=sys.stderr)
                code = 1
    finally:
        tf.compat.v1.logging.set_verbosity(verbosity)
        if strict_before is None:
            os.environ.pop(STRICT_ENV, None)
        else:
            os.environ[STRICT_ENV] = strict_before
    _print_warnings(caught)
    return code
