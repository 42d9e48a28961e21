"""Helpers for the debug tests: dump-enabled sessions, reading a dump folder back, recording inner values."""
import glob
import os

import pytest
import tensorflow as tf

import npu_bridge  # noqa: F401  (activates the emulation and registers the debug observers)
from npu_bridge.debug import dumpdata
from npu_bridge.runtime import observers
from npu_test_support import npu_config as support_config, observe  # noqa: F401  (observe: a fixture)


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
def inner_values(observe):
    return lambda names: observe(InnerValues(names))


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g
