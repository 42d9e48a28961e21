"""Data dump: what the emulated NPU computed, at the chosen steps, in Ascend's layout and DumpData format."""
import csv
import os
import re
import subprocess

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.debug import dumpdata
from npu_bridge.debug.cli import main as npu_debug
from npu_bridge.debug.convert import convert
from npu_bridge.estimator.npu import util
from npu_bridge.estimator.npu.npu_config import DumpConfig, npu_session_config

from .conftest import npu_config, read_folder, step_dirs

v1 = tf.compat.v1
FILE_NAME = re.compile(r"^(\w+)\.(\w+)\.(\d+)\.(\d{16})$")


def build_model():
    """x -> MatMul (white: float16) -> Exp (gray: follows, float16) -> Sum (black: float32)."""
    x = v1.placeholder(tf.float32, [2, 2], name="x")
    y = tf.matmul(x, x, name="scope/y")
    z = tf.exp(y, name="z")
    return x, tf.reduce_sum(z, name="s")


def feeds(step):
    return np.array([[0.1, 0.2], [0.3, 0.4]], np.float32) * (step + 1)


def test_dump_holds_what_the_emulated_npu_computed_at_the_chosen_steps(graph, tmp_path, inner_values):
    x, s = build_model()
    seen = inner_values(["scope/y:0", "z:0", "s:0"])
    config = npu_config(enable_dump=True, dump_path=str(tmp_path), dump_step="0|2-3", dump_mode="all")
    with v1.Session(config=config) as sess:
        for step in range(5):
            sess.run(s, {x: feeds(step)})
    dirs = step_dirs(str(tmp_path))
    assert sorted(step for _, _, step in dirs) == [0, 2, 3]
    assert {(name.startswith("ge_default_"), model_id) for name, model_id, _ in dirs} == {(True, 1)}
    for (_, _, step), folder in dirs.items():
        dumped = read_folder(folder)
        assert set(dumped) == {"scope/y", "z", "s"}
        for op_name, (file_name, message) in dumped.items():
            op_type, safe_name, _, _ = FILE_NAME.match(file_name).groups()
            assert safe_name == op_name.replace("/", "_")
            assert op_type == {"scope/y": "MatMulV2", "z": "Exp", "s": "ReduceSumD"}[op_name]
            output = dumpdata.to_array(message.output[0])
            expected = seen.steps[step][f"{op_name}:0"]
            assert output.dtype == expected.dtype and np.array_equal(output, expected)
        y_inputs = [dumpdata.to_array(t) for t in dumped["scope/y"][1].input]
        # The white MatMul reads its inputs in float16, as the NPU does (computed in float32 between casts here).
        assert [a.dtype for a in y_inputs] == [np.float16, np.float16]
        assert np.array_equal(y_inputs[0], feeds(step).astype(np.float16))
        assert dumped["z"][1].output[0].data_type == dumpdata.DATA_TYPE["DT_FLOAT16"]
        assert dumped["s"][1].output[0].data_type == dumpdata.DATA_TYPE["DT_FLOAT"]


@pytest.mark.parametrize("mode, inputs, outputs", [("input", True, False), ("output", False, True),
                                                   ("all", True, True)])
def test_dump_mode_selects_inputs_outputs_or_both(graph, tmp_path, mode, inputs, outputs):
    x, s = build_model()
    with v1.Session(config=npu_config(enable_dump=True, dump_path=str(tmp_path), dump_mode=mode)) as sess:
        sess.run(s, {x: feeds(0)})
    (folder,) = step_dirs(str(tmp_path)).values()
    for _, message in read_folder(folder).values():
        assert bool(message.input) == inputs and bool(message.output) == outputs


def test_dump_layer_dumps_only_the_named_ops(graph, tmp_path):
    x, s = build_model()
    config = npu_config(enable_dump=True, dump_path=str(tmp_path), dump_layer="z scope/y")
    with v1.Session(config=config) as sess:
        sess.run(s, {x: feeds(0)})
    (folder,) = step_dirs(str(tmp_path)).values()
    assert set(read_folder(folder)) == {"z", "scope/y"}


def test_each_graph_run_is_its_own_model_with_its_own_steps(graph, tmp_path):
    x, s = build_model()
    y = graph.get_tensor_by_name("scope/y:0")
    with v1.Session(config=npu_config(enable_dump=True, dump_path=str(tmp_path), dump_step="1")) as sess:
        for step in range(2):
            sess.run(s, {x: feeds(step)})
        sess.run(y, {x: feeds(0)})
    dirs = step_dirs(str(tmp_path))
    assert sorted((model_id, step) for _, model_id, step in dirs) == [(1, 1)]   # the y-only graph ran once: step 0


def test_iterations_per_loop_dumps_loop_iterations_as_steps(graph, tmp_path):
    w = v1.get_variable("w", initializer=np.full((2, 2), 0.5, np.float32))
    x = tf.constant(feeds(0), name="x")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w, name="mm")), name="loss")
    train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    config = npu_config(enable_dump=True, dump_path=str(tmp_path), dump_step="1|3", dump_mode="all",
                        iterations_per_loop=3)
    with v1.Session(config=config) as sess:
        sess.run(v1.global_variables_initializer())
        loop = util.set_iteration_per_loop(sess, train, 3)
        sess.run(loop)
        after_first_loop = sess.run(w)
        sess.run(loop)
    steps = {step: folder for (_, _, step), folder in step_dirs(str(tmp_path)).items() if "mm" in read_folder(folder)}
    assert sorted(steps) == [1, 3]
    # Step 3 is the first iteration of the second run: its MatMul read w as the first run's three updates left it.
    mm_weight = {step: dumpdata.to_array(read_folder(folder)["mm"][1].input[1]) for step, folder in steps.items()}
    assert np.array_equal(mm_weight[3], after_first_loop.astype(np.float16))
    assert not np.array_equal(mm_weight[1], mm_weight[3])


def test_stats_writes_one_row_per_tensor(graph, tmp_path):
    x, s = build_model()
    config = npu_config(enable_dump=True, dump_path=str(tmp_path), dump_data="stats", dump_mode="output")
    with v1.Session(config=config) as sess:
        value = sess.run(s, {x: feeds(0)})
    (folder,) = step_dirs(str(tmp_path)).values()
    assert os.listdir(folder) == ["statistic.csv"]
    with open(os.path.join(folder, "statistic.csv")) as f:
        rows = {row["Op Name"]: row for row in csv.DictReader(f)}
    assert set(rows) == {"scope/y", "z", "s"}
    assert rows["z"]["Data Type"] == "DT_FLOAT16" and rows["z"]["Shape"] == "(2,2)"
    assert rows["s"]["Input/Output"] == "Output" and float(rows["s"]["Max Value"]) == pytest.approx(value)


def test_dump_config_through_npu_session_config(graph, tmp_path):
    x, s = build_model()
    dump = DumpConfig(enable_dump=True, dump_path=str(tmp_path), dump_step="0", dump_mode="output")
    config = npu_session_config({"precision_mode_v2": "mixed_float16", **dump.parameters()})
    with v1.Session(config=config) as sess:
        sess.run(s, {x: feeds(0)})
        sess.run(s, {x: feeds(1)})
    assert [step for _, _, step in step_dirs(str(tmp_path))] == [0]


def test_sessions_without_dump_have_no_observer(graph):
    build_model()
    with v1.Session(config=npu_config()) as sess:
        assert sess._npu_emulation.observers == ()


def test_converter_writes_npy_named_as_msaccucmp_does(graph, tmp_path, capsys):
    x, s = build_model()
    dump_path = tmp_path / "dump"
    dump_path.mkdir()
    with v1.Session(config=npu_config(enable_dump=True, dump_path=str(dump_path), dump_mode="all")) as sess:
        sess.run(s, {x: feeds(0)})
    (folder,) = step_dirs(str(dump_path)).values()
    dumped = read_folder(folder)
    out = tmp_path / "npy"
    assert npu_debug(["convert", "-d", str(dump_path), "-out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"converted 3 dump files from {dump_path} into 8 files in {out}"
    file_name, message = dumped["z"]
    assert np.array_equal(np.load(out / f"{file_name}.output.0.npy"), dumpdata.to_array(message.output[0]))
    assert np.load(out / f"{file_name}.input.0.npy").dtype == np.float16
    assert sorted(p.split(".", 4)[-1] for p in os.listdir(out) if ".s." in p) == \
        ["input.0.npy", "input.1.npy", "output.0.npy"]
    assert len(convert(os.path.join(folder, file_name), str(tmp_path / "one")).written) == 2


def test_dump_step_in_the_wrong_format_fails_at_session_creation_with_the_adapter_message(graph, tmp_path):
    build_model()
    with pytest.raises(NpuConfigError, match=r"dump_step string style is error, correct example:'0\|5\|10\|50-100'"):
        v1.Session(config=npu_config(enable_dump=True, dump_path=str(tmp_path), dump_step="0,5"))


def test_dump_path_that_is_not_a_writable_directory_fails_at_session_creation(graph, tmp_path):
    build_model()
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(NpuConfigError, match=f"dump_path: the path {a_file} is not directory"):
        v1.Session(config=npu_config(enable_dump=True, dump_path=str(a_file)))
    if os.geteuid() != 0:      # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(NpuConfigError, match="does't have read, write permissions"):
            v1.Session(config=npu_config(enable_dump=True, dump_path=str(locked)))


def test_dump_config_in_npu_run_config_dumps_estimator_training(tmp_path):
    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec

    def model_fn(features, labels, mode):
        prediction = tf.matmul(features["x"], v1.get_variable("kernel", [3, 1]), name="dense/MatMul")
        loss = v1.losses.mean_squared_error(labels, prediction)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())
        return NPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    def input_fn():
        x = np.random.RandomState(0).randn(64, 3).astype(np.float32)
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).repeat().batch(16)

    dump_path = tmp_path / "dump"
    dump_path.mkdir()
    dump = DumpConfig(enable_dump=True, dump_path=str(dump_path), dump_step="2", dump_mode="output")
    config = NPURunConfig(model_dir=str(tmp_path / "model"), dump_config=dump, precision_mode="allow_mix_precision",
                          log_step_count_steps=None)
    NPUEstimator(model_fn=model_fn, config=config).train(input_fn, steps=5)
    dirs = step_dirs(str(dump_path))
    assert {step for _, _, step in dirs} == {2}
    dumped = {name: message for folder in dirs.values() for name, (_, message) in read_folder(folder).items()}
    assert dumped["dense/MatMul"].output[0].data_type == dumpdata.DATA_TYPE["DT_FLOAT16"]


def test_npu_debug_console_script_names_a_missing_dump(tmp_path):
    result = subprocess.run(["npu-debug", "convert", "-d", str(tmp_path / "missing"), "-out", str(tmp_path / "o")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert f"npu-debug convert: -d {tmp_path / 'missing'}: no such dump file or folder" in result.stderr
