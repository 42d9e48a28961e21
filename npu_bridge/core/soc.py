"""Which Ascend chip we emulate, and the two capabilities of it that change numerics.

The operator library, the default precision mode, whether bfloat16 modes are legal and what an fp16 overflow
produces all depend on the chip. Real scripts name chips in two spellings: the CANN soc version
("Ascend910A", "Ascend910B3", "Ascend910_9391", "Ascend310P3") and the lower-case folder name of the operator
library ("ascend910", "ascend910b"). Everything inside npu_bridge uses the folder name.

Capabilities (from the Ascend docs summarised in docs/BEHAVIOUR.md §2):

=============  =====  ==========  ===========================================================================
folder         bf16   saturation  why
=============  =====  ==========  ===========================================================================
ascend910      no     yes         first-generation training chip: bf16 modes are rejected; overflow saturates
ascend910b     yes    no          "A2": bf16 modes allowed; IEEE inf/nan by default; training keeps origin
ascend910_93   yes    no          "A3": same as A2
ascend950      yes    no          newest generation: same as A2 for what we emulate
ascend310p     no     yes         inference chip; the docs allow bf16 modes only on A2/A3/950. Its overflow
                                  mode is not documented: we assume the saturation of its generation (910)
ascend310      no     yes         as ascend310p
ascend310b     no     yes         as ascend310p
=============  =====  ==========  ===========================================================================

The real soc version "Ascend910B" (no digit) is a first-generation 910 bin, but "ascend910b" is also the A2
folder name. We read the bare spelling as the folder name, because that is what users of this package write;
first-generation variants are spelled Ascend910A / Ascend910ProA / Ascend910ProB / Ascend910PremiumA.
"""
import re
from dataclasses import dataclass

from npu_bridge.core.errors import NpuConfigError

DEFAULT_SOC = "ascend910"
SOC_ENV_VAR = "NPU_BRIDGE_SOC"


@dataclass(frozen=True)
class SocInfo:
    name: str
    supports_bf16: bool
    saturation_mode: bool


_SOCS = {
    "ascend910": SocInfo("ascend910", supports_bf16=False, saturation_mode=True),
    "ascend910b": SocInfo("ascend910b", supports_bf16=True, saturation_mode=False),
    "ascend910_93": SocInfo("ascend910_93", supports_bf16=True, saturation_mode=False),
    "ascend950": SocInfo("ascend950", supports_bf16=True, saturation_mode=False),
    "ascend310p": SocInfo("ascend310p", supports_bf16=False, saturation_mode=True),
    "ascend310": SocInfo("ascend310", supports_bf16=False, saturation_mode=True),
    "ascend310b": SocInfo("ascend310b", supports_bf16=False, saturation_mode=True),
}

KNOWN_SOCS = tuple(_SOCS)

# Chips whose platform reports "cube high precision": with no precision mode set, training keeps the graph's
# dtypes (must_keep_origin_dtype) instead of allow_fp32_to_fp16 (GE fe_context_utils SetDefaultPrecisionMode).
KEEP_ORIGIN_BY_DEFAULT = frozenset({"ascend910b", "ascend910_93", "ascend950"})

# CANN soc version spellings (lower-cased) -> folder. Checked in order; the first full match wins.
_SOC_VERSION_PATTERNS = (
    (re.compile(r"ascend910(a|proa|prob|premiuma)?"), "ascend910"),
    (re.compile(r"ascend910b\d*(c|-\d+)?"), "ascend910b"),
    (re.compile(r"ascend910_93\d*"), "ascend910_93"),
    (re.compile(r"ascend950(pr|dt)?\w*"), "ascend950"),
    (re.compile(r"ascend310p\d*"), "ascend310p"),
    (re.compile(r"ascend310b\d*"), "ascend310b"),
    (re.compile(r"ascend310"), "ascend310"),
)


def resolve_soc(value: str | bytes) -> str:
    """Folder name for a soc spelling: "Ascend910ProA" -> "ascend910", "Ascend910B3" -> "ascend910b"."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value).strip().lower()
    if text in _SOCS:
        return text
    for pattern, folder in _SOC_VERSION_PATTERNS:
        if pattern.fullmatch(text):
            return folder
    raise NpuConfigError(
        f"soc_config value '{value}' is not a known Ascend soc. Known socs: {', '.join(KNOWN_SOCS)} "
        "(CANN soc versions such as Ascend910A, Ascend910ProA, Ascend910B1..B4, Ascend910_9391, Ascend310P3 "
        "are accepted too)."
    )


def soc_info(name: str) -> SocInfo:
    """Capabilities of a soc (any accepted spelling)."""
    return _SOCS[resolve_soc(name)]


def selected_soc(soc_config: str | bytes | None = None, default: str | None = None) -> str:
    """The soc a session emulates: the soc_config option, else `default` (CoreSettings.soc, i.e. $NPU_BRIDGE_SOC),
    else ascend910."""
    if soc_config:
        return resolve_soc(soc_config)
    if default:
        try:
            return resolve_soc(default)
        except NpuConfigError as err:
            raise NpuConfigError(f"environment variable {SOC_ENV_VAR}: {err}") from None
    return DEFAULT_SOC


# npu_plugin.set_device_sat_mode switches the whole device: None keeps each soc's own default.
_device_saturation = None


def set_device_saturation(saturation: bool | None) -> None:
    """Saturation (True) or INF/NaN (False) overflow for every session from now on; None: each soc's default."""
    global _device_saturation
    _device_saturation = saturation


def saturates(soc: str) -> bool:
    """Does a float16 overflow give +-65504 (saturation mode) on this soc, given set_device_sat_mode?"""
    if _device_saturation is not None:
        return _device_saturation
    return soc_info(soc).saturation_mode
