"""Errors raised by npu_bridge: one type for bad configuration, one for a failed graph rewrite, one warning."""
import os

STRICT_ENV = "NPU_BRIDGE_STRICT"


class NpuConfigError(ValueError):
    """Bad NpuOptimizer configuration: an option, a modify_mixlist or customize_dtypes file, a soc name.

    The message names the key, file, op or value at fault and what was expected. Where the real Ascend adapter
    has a known message, that message is kept verbatim inside ours so users can search for it.
    """


class NpuConfigWarning(UserWarning):
    """A mistake the real adapter silently ignores (unknown key, value in the wrong AttrValue field, unknown op).

    Public as `npu_bridge.NpuConfigWarning`, the name to give warning filters.
    """


def did_you_mean(names):
    """" Did you mean 'a', 'b' or 'c'?" for up to three close matches, nearest first; "" for none."""
    quoted = [f"'{name}'" for name in list(names)[:3]]
    if not quoted:
        return ""
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f" Did you mean {listed}?"


MAX_SHOWN_VALUE = 120


def shown(value, limit=MAX_SHOWN_VALUE):
    """`value` as a message shows it: whole when short, else its start and its length (a 1 MB option value pasted
    by mistake must not become a 1 MB error)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def strict_mode():
    """Whether configuration warnings are errors: NPU_BRIDGE_STRICT set to anything but "" or "0" (npu-run
    --strict and npu-report --strict set it). Read at each warning, so it holds whenever it was set."""
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


class PrecisionPassError(RuntimeError):
    """The precision pass could not rewrite a graph. The caller's GraphDef is left untouched."""

    def __init__(self, node, rule, detail):
        self.node = node
        self.rule = rule
        super().__init__(f"NpuOptimizer precision pass failed at node '{node}' ({rule}): {detail}")
