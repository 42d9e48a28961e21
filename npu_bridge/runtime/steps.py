"""What the tools built on top of the runtime (npu_bridge.debug, npu_bridge.artifacts) may use of it.

A tool sees an emulated session and its steps through the run observers (runtime/observers.py): the typed views
`EmulationView` (the user's graph, options and lists, the running program: its reduced graph, report and
tensor map, and its inner session), `PlanView` and `StepRecord`. It asks for extra inner tensors in a step
with `RunObserver.before_step`, and runs a plan of its own on the reduced graph with `EmulationView.plan_for`.
This module holds the rest: what a tool needs to compute float32 truth beside the emulation, namely a plain
session configured to compute as the inner session does (`float32_config`) and variable values copied between
sessions (`VariableCopier`, `read_variables`, `write_variables`).

Tools import nothing else of npu_bridge.runtime (tests/runtime/test_tool_seam.py reads them), so the session,
its plans and its program can change inside without a tool noticing, and no tool grows a branch in them.
"""
from typing import Any

from npu_bridge.runtime.state_transfer import VariableCopier, read_variables, write_variables

__all__ = ["VariableCopier", "float32_config", "read_variables", "write_variables"]


def float32_config(config: Any) -> Any:
    """A ConfigProto for a plain float32 session of the user's graph that computes op by op as the emulated inner
    session does (the same grappler passes), with no custom optimizer: TensorFlow's float32 twin of `config`."""
    from npu_bridge.runtime.emulated import inner_config

    twin = inner_config(config)
    del twin.graph_options.rewrite_options.custom_optimizers[:]
    return twin
