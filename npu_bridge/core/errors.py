"""Errors raised by npu_bridge: one type for bad configuration, one for a failed graph rewrite."""


class NpuConfigError(ValueError):
    """Bad NpuOptimizer configuration: an option, a modify_mixlist or customize_dtypes file, a soc name.

    The message names the key, file, op or value at fault and what was expected. Where the real Ascend adapter
    has a known message, that message is kept verbatim inside ours so users can search for it.
    """


class NpuConfigWarning(UserWarning):
    """A mistake the real adapter silently ignores (unknown key, value in the wrong AttrValue field, unknown op)."""


class PrecisionPassError(RuntimeError):
    """The precision pass could not rewrite a graph. The caller's GraphDef is left untouched."""

    def __init__(self, node, rule, detail):
        self.node = node
        self.rule = rule
        super().__init__(f"NpuOptimizer precision pass failed at node '{node}' ({rule}): {detail}")
