"""Loss scaling as the debug tools see it: which steps NPULossScaleOptimizer applied, and at which scale.

A step whose scaled gradients overflow float16 is skipped (no weight changes) and, with dynamic loss scaling,
the scale shrinks: from 2^32 that is tens of steps, as on hardware. Those overflows are what loss scaling is
for, not a precision problem, so compare does not judge a skipped step and suggest judges the steps applied.

Found in the user's graph by the names npu_bridge's NPULossScaleOptimizer and managers give their ops: the
boolean deciding the step (`overflow_status_all_finite`, or `overflow_status_all_ranks` when shared across
ranks), the scale the step uses (`loss_scale`: a variable for ExponentialUpdateLossScaleManager, a constant for
FixedLossScaleManager) and, for a variable, the value assigned to it for the next step.
"""
import math
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from npu_bridge.debug.stepgraph import VARIABLE_OPS

_DECISIONS = ("overflow_status_all_ranks", "overflow_status_all_finite")
_ASSIGNS = frozenset({"Assign", "AssignVariableOp"})


@dataclass(frozen=True)
class LossScaling:
    applied: str            # user tensor name: True when the step's gradients are applied
    scale: str              # user tensor name: the scale the step multiplies the loss by
    next_scale: str | None  # user tensor name: the scale assigned for the next step (dynamic scaling only)
    variable: str | None    # the scale variable's op name (dynamic scaling), None for a fixed scale

    @property
    def dynamic(self):
        return self.variable is not None

    def tensors(self):
        return tuple(name for name in (self.applied, self.scale, self.next_scale) if name)


def find(ops):
    """The LossScaling of a step executing `ops` (user tf.Operations), or None when it has no loss scaling."""
    by_name = {op.name: op for op in ops}
    decision = next((op for suffix in _DECISIONS for op in ops if op.name.rsplit("/", 1)[-1] == suffix), None)
    if decision is None:
        return None
    prefix = decision.name[:-len(decision.name.rsplit("/", 1)[-1])]
    scale_op = by_name.get(prefix + "loss_scale")
    if scale_op is None:
        scale_op = next((op for op in ops if op.name.rsplit("/", 1)[-1] == "loss_scale"), None)
    if scale_op is None:
        return LossScaling(decision.outputs[0].name, None, None, None)
    if scale_op.type not in VARIABLE_OPS:
        return LossScaling(decision.outputs[0].name, scale_op.outputs[0].name, None, None)
    reads = [op for op in ops if op.type in ("Identity", "ReadVariableOp") and op.inputs
             and op.inputs[0].op is scale_op and op.outputs[0].dtype == tf.float32]
    # The manager's update, not the variable's initializer (`loss_scale/Assign`).
    assigns = [op for op in ops if op.type in _ASSIGNS and op.inputs[0].op is scale_op
               and not op.name.startswith(scale_op.name + "/")]
    scale = reads[0].outputs[0].name if reads else None
    next_scale = assigns[0].inputs[1].name if assigns else None
    return LossScaling(decision.outputs[0].name, scale, next_scale, scale_op.name)


def scales(scaling, inner, record, variables):
    """(scale the step used, scale for the next step), None where unknown. A dynamic scale is read from the
    variables before the step: a fetched read of the variable may already show the step's update."""
    if scaling.dynamic:
        scale = variables.get(scaling.variable) if variables else None
    else:
        scale = record.extra.get(inner.get(scaling.scale))
    following = record.extra.get(inner.get(scaling.next_scale)) if scaling.next_scale else None
    return tuple(None if value is None else float(np.asarray(value)) for value in (scale, following))


def power(value):
    """2^k for a power of two (how scripts set loss scales), else the number."""
    value = float(value)
    if value > 0 and math.log2(value).is_integer():
        return f"2^{int(math.log2(value))}"
    return f"{value:g}"


def skipped_message(step, scale, next_scale):
    """'step 3 skipped by loss scaling, scale 2^32 -> 2^31' (the scale part when known)."""
    if scale is None:
        return f"step {step} skipped by loss scaling"
    if next_scale is None or float(next_scale) == float(scale):
        return f"step {step} skipped by loss scaling, scale {power(scale)}"
    return f"step {step} skipped by loss scaling, scale {power(scale)} -> {power(next_scale)}"
