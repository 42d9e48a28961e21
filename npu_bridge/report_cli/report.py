"""`npu-report GRAPH`: the precision pass run on a saved graph exactly as a session runs it, and its report printed.

The command line is parsed by npu_bridge.report_cli (no TensorFlow needed for that); this module imports
TensorFlow and the pass.
"""
import dataclasses
import difflib
import sys
import warnings
from pathlib import Path

import tensorflow as tf

from npu_bridge.core.contract import MIXED_MODES
from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning, PrecisionPassError
from npu_bridge.core.mixlist import build_precision_lists
from npu_bridge.core.options import PRECISION_MODE_V2_VALUES, PRECISION_MODE_VALUES
from npu_bridge.core.precision import rewrite
from npu_bridge.report_cli.graph_file import GraphFileError, load_graph_def
from npu_bridge.report_cli.render import print_comparison, print_explanation, print_table
from npu_bridge.settings import core_settings, parameter_map_options

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


def _settings(args):
    """The environment's core settings, strict when --strict asks."""
    settings = core_settings()
    return dataclasses.replace(settings, strict=True) if args.strict else settings


def _run_pass(graph_def, params, settings):
    """(options, lists, RewriteResult) exactly as a session with this parameter_map computes them."""
    options = parameter_map_options(params, settings)
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
            if parameter_map_options(params, _settings(args)).mode in MIXED_MODES:
                params["modify_mixlist"] = mixlist
            else:
                note = f"(modify_mixlist {mixlist} only applies to mixed modes: not used for the {value} run)"
        return _run_pass(graph_def, params, _settings(args))[2].report, note
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
    options, lists, result = _run_pass(graph_def, _parameter_map(args), _settings(args))
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


def _print_warnings(caught):
    """NpuConfigWarnings once each, as the CLI's own lines; anything else as Python would have shown it."""
    shown = set()
    for warning in caught:
        if not issubclass(warning.category, NpuConfigWarning):
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
        elif str(warning.message) not in shown:
            shown.add(str(warning.message))
            print(f"{PROG}: warning: {warning.message}", file=sys.stderr)


def run(args):
    """Print the report the parsed arguments ask for; 0 printed, 1 the pass failed on this graph, 2 bad
    arguments or configuration."""
    # The pass logs its summary through TensorFlow's logger; the CLI prints it (and each warning once) itself.
    verbosity = tf.compat.v1.logging.get_verbosity()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
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
    _print_warnings(caught)
    return code
