"""Errors raised by npu_bridge: one type for bad configuration, one for a failed graph rewrite, one warning."""
from collections.abc import Iterable

# The environment variable that makes configuration warnings errors (read at the edge: npu_bridge.settings).
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


def did_you_mean(names: Iterable[str]) -> str:
    """" Did you mean 'a', 'b' or 'c'?" for up to three close matches, nearest first; "" for none."""
    quoted = [f"'{name}'" for name in list(names)[:3]]
    if not quoted:
        return ""
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f" Did you mean {listed}?"


MAX_SHOWN_VALUE = 120


def shown(value: object, limit: int = MAX_SHOWN_VALUE) -> str:
    """`value` as a message shows it: whole when short, else its start and its length (a 1 MB option value pasted
    by mistake must not become a 1 MB error)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class PrecisionPassError(RuntimeError):
    """The precision pass could not rewrite a graph. The caller's GraphDef is left untouched."""

    def __init__(self, node: str, rule: str, detail: str) -> None:
        self.node = node
        self.rule = rule
        super().__init__(f"NpuOptimizer precision pass failed at node '{node}' ({rule}): {detail}")
