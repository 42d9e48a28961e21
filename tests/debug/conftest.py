"""Helpers for the debug tests: dump-enabled sessions, reading a dump folder back, recording inner values."""
import glob
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.debug import dumpdata
from npu_bridge.debug.capture import CaptureObserver
from npu_bridge.runtime import observers
from npu_test_support import npu_config as support_config, observe  # noqa: F401  (observe: a fixture)

npu_bridge.activate()     # with the debug observers registered
v1 = tf.compat.v1
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"     # real-style scripts (test_real_scripts_*.py)


def start_npu_debug(*args, cwd):
    """`npu-debug args` in a fresh interpreter, as a user runs it, started (see finish)."""
    return subprocess.Popen([sys.executable, "-m", "npu_bridge.debug.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def finish(process):
    """(exit code, stdout, stderr) of a started run."""
    try:
        out, err = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out, err


def npu_debug(*args, cwd):
    return finish(start_npu_debug(*args, cwd=cwd))


@pytest.fixture(scope="module")
def _started_runs(request, tmp_path_factory):
    """The module's CLI_RUNS ({test name: function(folder) -> npu-debug arguments}) of the tests selected, all
    started at once, each in a folder of its own: they are independent processes, each mostly importing
    TensorFlow and building a graph, so together they share out the machine's cores instead of waiting in line."""
    runs = request.module.CLI_RUNS
    started = {}
    for item in request.session.items:
        if item.module is request.module and item.name in runs:
            folder = tmp_path_factory.mktemp("cli")
            started[item.name] = (folder, start_npu_debug(*runs[item.name](folder), cwd=folder))
    yield started
    for _, process in started.values():
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.fixture
def cli_run(request, _started_runs):
    """(folder, exit code, stdout, stderr) of this test's run in its module's CLI_RUNS."""
    folder, process = _started_runs[request.node.name]
    return (folder, *finish(process))


def npu_config(**parameters):
    """A mixed_float16 NpuOptimizer ConfigProto with `parameters` (dump options, soc_config, ...)."""
    return support_config(use_off_line=True, precision_mode_v2="mixed_float16", **parameters)


def step_dirs(dump_path):
    """{(model_name, model_id, step): folder} of a dump (one session)."""
    found = {}
    for folder in glob.glob(os.path.join(dump_path, "*", "*", "*", "*", "*")):
        parts = folder.split(os.sep)
        found[(parts[-3], int(parts[-2]), int(parts[-1]))] = folder
    return found


def read_folder(folder):
    """{op_name: (file name, DumpData)} of one step folder's dump files."""
    return {dumpdata.read(path).op_name: (os.path.basename(path), dumpdata.read(path))
            for path in glob.glob(os.path.join(folder, "*.*.*.*")) if not path.endswith((".csv", ".json"))}


class InnerValues(observers.RunObserver):
    """Fetches, every step, the inner tensors holding user tensors `names` (through the report's tensor_map)."""

    def __init__(self, names):
        self.names = names
        self.steps = []

    def before_step(self, emulation, plan, step):
        tensor_map = plan.program.result.tensor_map
        return [tensor_map[n].name if n in tensor_map else n for n in self.names]

    def after_step(self, record):
        tensor_map = record.plan.program.result.tensor_map
        self.steps.append({n: record.extra[tensor_map[n].name if n in tensor_map else n] for n in self.names})


@pytest.fixture
def inner_values(observe):  # noqa: F811  (the fixture imported above)
    return lambda names: observe(InnerValues(names))


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def dump_small_model(folder, **options):
    """A scoped two-layer network with a scalar output, one step, dumped (inputs and outputs) into `folder`."""
    with tf.Graph().as_default():
        rng = np.random.RandomState(0)
        x = v1.placeholder(tf.float32, [4, 8], name="x")
        with tf.name_scope("block1"):
            hidden = tf.nn.relu(tf.matmul(x, tf.constant(rng.randn(8, 8).astype(np.float32))), name="act")
        with tf.name_scope("block2"):
            out = tf.exp(tf.matmul(hidden, tf.constant(rng.randn(8, 8).astype(np.float32))) * 0.1, name="e")
        total = tf.reduce_sum(out, name="total")
        config = support_config(use_off_line=True, dump_path=str(folder), dump_mode="all", **options)
        with v1.Session(config=config) as sess:
            sess.run(total, {x: rng.randn(4, 8).astype(np.float32)})
    (step,) = glob.glob(os.path.join(folder, "*", "*", "*", "*", "0"))
    return step


def record_training(build, steps, metric=None):
    """Train the model `build()` returns ((train op, loss, feeds), built in a fresh graph) for `steps` steps under
    allow_mix_precision, recorded as npu-debug suggest records it."""
    with tf.Graph().as_default():
        train, loss, feeds = build()
        observer = CaptureObserver(steps, metric)
        observers.add_observer(observer)
        try:
            with tf.compat.v1.Session(config=support_config(precision_mode="allow_mix_precision")) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                for _ in range(steps):
                    sess.run([train, loss], feeds)
        finally:
            observers.remove_observer(observer)
            observer.close()
    assert observer.recording is not None, observer.failure("the test")
    return observer.recording
