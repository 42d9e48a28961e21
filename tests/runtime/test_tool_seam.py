"""The debug tools and the CI artifacts see the runtime only through its seam (runtime/observers.py, whose views
the runtime implements, and runtime/steps.py), and what the seam promises works on a real emulated session."""
import ast
import pathlib

import numpy as np
import tensorflow as tf

import npu_bridge
from npu_bridge.runtime import observers, steps
from npu_test_support import npu_config

v1 = tf.compat.v1
PACKAGE = pathlib.Path(npu_bridge.__file__).resolve().parent
TOOLS = ("debug", "artifacts")
SEAM = {"npu_bridge.runtime.observers", "npu_bridge.runtime.steps"}


def _runtime_imports(path):
    """The npu_bridge.runtime modules (and package-level names) a module imports."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("npu_bridge.runtime"):
            if node.module == "npu_bridge.runtime":
                yield from (f"npu_bridge.runtime.{alias.name}" for alias in node.names)
            else:
                yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("npu_bridge.runtime"))


def test_tools_import_only_the_runtime_seam():
    found = {(path.relative_to(PACKAGE).as_posix(), module)
             for room in TOOLS for path in sorted((PACKAGE / room).rglob("*.py")) for module in _runtime_imports(path)}
    assert found, "the tools import the seam at least (the scan finds imports)"
    assert sorted((where, module) for where, module in found if module not in SEAM) == []


def test_an_emulated_session_implements_the_views_and_runs_a_tools_own_plan():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 2], name="x")
        w = v1.get_variable("w", initializer=tf.constant([[1.0, 3.0], [0.7, 0.1]]))
        y = tf.identity(tf.matmul(x, w) + 1.0 / 3.0, name="y")     # MatMul is reduced to float16
    feed = np.array([[0.1, 0.2]], np.float32)
    records = []

    class Keep(observers.RunObserver):
        def after_step(self, record):
            records.append(record)

    observer = Keep()
    observers.add_observer(observer)
    try:
        with v1.Session(graph=graph, config=npu_config(precision_mode="allow_mix_precision")) as session:
            session.run(w.initializer)
            emulated = session.run(y, {x: feed})
            emulation, plan = records[-1].emulation, records[-1].plan
            assert isinstance(emulation, observers.EmulationView) and isinstance(plan, observers.PlanView)
            assert isinstance(emulation.program, observers.ProgramView) and emulation.program is plan.program
            assert isinstance(plan.program.result, observers.RewriteView)
            assert isinstance(plan.mapper, observers.FetchStructureView) and plan.mapper.unique_fetches() == [y]
            assert [slot.user_tensor for slot in plan.slots] == [x]
            assert all(isinstance(slot, observers.FeedSlotView) for slot in plan.slots)
            [again] = emulation.plan_for([y], [x]).execute([feed])
            np.testing.assert_array_equal(again, emulated)
            session.run(y, {x: feed})
            assert [record.step for record in records if record.plan is plan] == [0, 1], "the tool's own run is no step, told no one"
            variables = steps.read_variables(emulation.program.session, emulation.program.graph)
    finally:
        observers.remove_observer(observer)
    np.testing.assert_array_equal(variables["w"], np.array([[1.0, 3.0], [0.7, 0.1]], np.float32))
    twin_graph = tf.Graph()
    with twin_graph.as_default():
        tf.graph_util.import_graph_def(graph.as_graph_def(), name="")
    config = steps.float32_config(npu_config(precision_mode="allow_mix_precision"))
    assert not config.graph_options.rewrite_options.custom_optimizers
    with v1.Session(graph=twin_graph, config=config) as twin:
        steps.write_variables(twin, twin_graph, variables)
        truth = twin.run("y:0", {"x:0": feed})
    np.testing.assert_allclose(truth, emulated, rtol=1e-3)
    assert not np.array_equal(truth, emulated), "the twin computes float32, the emulation float16"
