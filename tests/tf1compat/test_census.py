"""The ModelZoo census tool (tools/modelzoo_census.py): its failure classifier on small fake tracebacks, and how it
reads a training folder's test/*.sh. The census itself needs a ModelZoo checkout and is not run in CI."""
import importlib.util
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


failures = _load("census_failures")
census = _load("modelzoo_census")

NPU_BRIDGE = "/repo/npu_bridge"


def traceback(*frames, exception):
    lines = ["some log line", "Traceback (most recent call last):"]
    for path, line in frames:
        lines += [f'  File "{path}", line {line}, in <module>', "    statement()"]
    return "\n".join([*lines, exception, ""])


SCRIPT = ("/mz/TensorFlow/contrib/cv/model/train.py", 3)
HOOK = (f"{NPU_BRIDGE}/launcher.py", 111)
BOOTSTRAP = ("<frozen importlib._bootstrap>", 1204)


@pytest.mark.parametrize("exception, category", [
    ("AttributeError: module 'tensorflow.compat.v1' has no attribute 'contrib'", "tf_api"),
    ("ModuleNotFoundError: No module named 'tensorflow.contrib'", "tf_api"),
    ("ModuleNotFoundError: No module named 'keras.utils.np_utils'", "tf_api"),
    ("ImportError: cannot import name 'threadpool' from 'tensorflow.python.data.experimental.ops' (/x.py)", "tf_api"),
    ("AttributeError: module 'tensorflow' has no attribute 'estimator'", "tf_api"),
    ("ModuleNotFoundError: No module named 'tensorflow_core'", "tf_api"),
    ("ModuleNotFoundError: No module named 'imageio'", "third_party"),
    ("ModuleNotFoundError: No module named 'npu_bridge.estimator.npu.npu_convert_dropout'", "npu_bridge"),
    ("ImportError: cannot import name 'NpuExecutePlacement' from 'npu_bridge.estimator.npu.npu_config'", "npu_bridge"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/data/train.txt'", "data"),
    ("tensorflow.python.framework.errors_impl.NotFoundError: /tmp/data/x.tfrecord; No such file", "data"),
    ("ValueError: num_samples should be a positive integer value, but got num_samples=0", "data"),
    ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", "other"),
])
def test_the_last_exception_of_a_script_traceback_decides(exception, category):
    output = traceback(SCRIPT, BOOTSTRAP, HOOK, BOOTSTRAP, exception=exception)
    failure = failures.classify(1, output, npu_bridge_dir=NPU_BRIDGE)
    assert failure.category == category
    assert failure.exception == exception
    assert failure.where == f"{SCRIPT[0]}:{SCRIPT[1]}"      # npu-run's import hook and importlib are passed over


def test_an_error_raised_inside_npu_bridge_is_npu_bridges():
    output = traceback(SCRIPT, (f"{NPU_BRIDGE}/runtime/session.py", 40),
                       exception="ValueError: could not convert the graph")
    failure = failures.classify(1, output, npu_bridge_dir=NPU_BRIDGE)
    assert (failure.category, failure.where) == ("npu_bridge", f"{NPU_BRIDGE}/runtime/session.py:40")


def test_a_missing_tf_api_is_tf_api_even_when_npu_bridges_compat_layer_names_it():
    output = traceback(SCRIPT, (f"{NPU_BRIDGE}/tf1compat/contrib/__init__.py", 30),
                       exception="AttributeError: tf.contrib.bayesflow is not provided: use tensorflow_probability")
    assert failures.classify(1, output, npu_bridge_dir=NPU_BRIDGE).category == "tf_api"


def test_any_error_npu_bridges_compat_layer_raises_is_a_tf_api_stop():
    output = traceback(SCRIPT, (f"{NPU_BRIDGE}/tf1compat/keras_paths.py", 151),
                       exception="NotImplementedError: keras.utils.multi_gpu_model: multi_gpu_model was removed")
    assert failures.classify(1, output, npu_bridge_dir=NPU_BRIDGE).category == "tf_api"
    output = traceback(SCRIPT, (f"{NPU_BRIDGE}/tf1compat/contrib/tpu/__init__.py", 135),
                       exception="ValueError: TPUEstimator(use_tpu=True): this machine has no TPU")
    assert failures.classify(1, output, npu_bridge_dir=NPU_BRIDGE).category == "tf_api"


def test_only_the_last_traceback_counts():
    first = traceback(SCRIPT, exception="ModuleNotFoundError: No module named 'imageio'")
    last = traceback(SCRIPT, exception="AttributeError: module 'tensorflow' has no attribute 'contrib'")
    assert failures.classify(1, first + "During handling...\n" + last).category == "tf_api"


@pytest.mark.parametrize("output", [
    "usage: train.py [-h] --data_dir DATA_DIR\ntrain.py: error: the following arguments are required: --data_dir\n",
    "usage: main.py [-h]\nmain.py: error: unrecognized arguments: --precision_mode=allow_mix_precision\n",
    traceback(SCRIPT, exception="absl.flags._exceptions.UnrecognizedFlagError: Unknown command line flag 'x'"),
    "FATAL Flags parsing error: flag --data_dir=None: Flag --data_dir must have a value other than None.\n",
])
def test_a_refused_command_line_is_flags(output):
    assert failures.classify(2 if "usage" in output else 1, output).category == "flags"


def test_exit_zero_and_a_timeout_both_count_as_ran():
    assert failures.classify(0, "step 10 loss 0.3\n").category == "ran"
    ran = failures.classify(None, "Epoch 1/10\n", timed_out=True)
    assert (ran.category, ran.exception) == ("ran", "Epoch 1/10")


def test_exit_zero_after_reporting_missing_data_is_data():
    output = "Downloading data from https://host/cifar-10-python.tar.gz\nURL fetch failure on https://host/x: None\n"
    assert failures.classify(0, output).category == "data"
    assert failures.classify(0, "No data loaded.\n").category == "data"


def test_a_failure_without_traceback_is_read_from_its_last_line():
    assert failures.classify(1, "loading\nERROR: dataset folder /tmp/d does not exist\n").category == "data"
    other = failures.classify(-9, "")
    assert (other.category, other.exception) == ("other", "exit status -9, no output")


TRAIN_SH = r"""#!/bin/bash
cur_path=`pwd`/../
data_path=""
batch_size=64
export PYTHONPATH=$cur_path/slim:$PYTHONPATH
for para in $*
do
    if [[ $para == --data_path* ]];then
        data_path=`echo ${para#*=}`
    fi
done
cd $cur_path/src
# python3 old_train.py
nohup python3 train.py \
    --data_dir=${data_path}/train \
    --batch_size $batch_size \
    --name "two words" \
    --ckpt=${ckpt_path} --epochs 2 1>${cur_path}/test/output/train.log 2>&1 &
"""


def test_the_entry_script_and_its_flags_come_from_the_1p_shell_script(tmp_path):
    folder = tmp_path / "TensorFlow" / "contrib" / "cv" / "Model_ID1_for_TensorFlow"
    (folder / "test").mkdir(parents=True)
    (folder / "src").mkdir()
    (folder / "src" / "train.py").write_text("import npu_bridge\n")
    (folder / "test" / "train_performance_1p.sh").write_text(TRAIN_SH)
    (folder / "test" / "train_full_8p.sh").write_text("python3 other.py\n")
    data = tmp_path / "empty"

    entry = census.find_entry(folder, data)
    assert entry.shell_script.name == "train_performance_1p.sh"
    assert entry.script == (folder / "src" / "train.py").resolve()
    assert entry.cwd == (folder / "src").resolve()
    assert entry.args == [f"--data_dir={data}/train", "--batch_size", "64", "--name", "two words", f"--ckpt={data}",
                          "--epochs", "2"]
    assert entry.environment["PYTHONPATH"].startswith(f"{folder}/test/..//slim:")
    assert census.training_folders(tmp_path) == [folder]


def test_a_cd_into_a_folder_this_machine_has_not_is_a_setup_stop_named_by_its_line(tmp_path):
    folder = tmp_path / "TensorFlow" / "contrib" / "cv" / "Model_ID2_for_TensorFlow"
    (folder / "test").mkdir(parents=True)
    (folder / "train.py").write_text("import npu_bridge\n")
    site_packages = "/usr/local/python3.7.5/lib/python3.7/site-packages/tensorflow_core/python/ops"
    (folder / "test" / "train_performance_1p.sh").write_text(
        f"cur_path=`pwd`\ncd $cur_path/../\ncd {site_packages}\ncp nn_grad.py nn_grad.py.bak\ncd -\n"
        "python3 -u train.py --epochs 1\n")

    entry = census.find_entry(folder, tmp_path / "empty")
    assert entry.script is None
    assert entry.problem_category == "flags"
    assert site_packages in entry.problem and f"cd {site_packages}" in entry.problem
    row = census.run_entry(entry, sys.executable, 5, NPU_BRIDGE)
    assert row["category"] == "flags"
    assert row["exception"] == entry.problem


def test_a_checkout_without_tensorflow_folder_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="has no TensorFlow/ folder"):
        census.training_folders(tmp_path)


def test_a_tf_slim_import_error_is_a_tf_api_gap():
    output = traceback(SCRIPT, exception="ImportError: cannot import name 'layers' from 'tf_slim.layers.layers' (/x.py)")
    assert failures.classify(1, output).category == "tf_api"


def test_reclassify_rereads_the_kept_outputs(tmp_path, capsys):
    tsv = tmp_path / "census.tsv"
    columns = ["folder", "category", "elapsed_s", "status", "exception", "where", "last_line", "command", "cwd"]
    row = ["TensorFlow/contrib/cv/M", "other", "3.0", "1", "old", "", "", "", ""]
    tsv.write_text("\t".join(columns) + "\n" + "\t".join(row) + "\n")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "TensorFlow__contrib__cv__M.log").write_text(
        traceback(SCRIPT, exception="ModuleNotFoundError: No module named 'cv2'"))
    assert census.main(["--reclassify", "--out", str(tsv), "--logs", str(tmp_path / "logs")]) == 0
    assert tsv.read_text().splitlines()[1].split("\t")[1:5] == ["third_party", "3.0", "1",
                                                                "ModuleNotFoundError: No module named 'cv2'"]
    assert "1 training folders: third_party 1" in capsys.readouterr().out


def test_an_empty_file_list_and_npu_bridges_own_missing_file_errors_are_data():
    empty = traceback(SCRIPT, exception="TypeError: in user code:") + (
        "\n    File \"utils.py\", line 44, in image_processing  *\n        x = tf.read_file(filename)\n\n"
        "    TypeError: Input 'filename' of 'ReadFile' Op has type float32 that does not match expected type\n")
    assert failures.classify(1, empty).category == "data"
    mnist = traceback(SCRIPT, (f"{NPU_BRIDGE}/tf1compat/examples/tutorials/mnist/input_data.py", 44),
                      exception="FileNotFoundError: read_data_sets: MNIST file train-images-idx3-ubyte.gz not found")
    assert failures.classify(1, mnist, npu_bridge_dir=NPU_BRIDGE).category == "data"


def test_a_graph_op_finding_no_files_is_data_even_when_npu_bridges_session_run_re_raised_it():
    errors = "tensorflow.python.framework.errors_impl.InvalidArgumentError"
    op_error = traceback(SCRIPT, exception=f"{errors}: assertion failed: [No files matched pattern: /d/train-*]")
    rerun = traceback(SCRIPT, (f"{NPU_BRIDGE}/runtime/emulated.py", 85),
                      exception=f"{errors}: Graph execution error:")
    chained = op_error + "\nDuring handling of the above exception, another exception occurred:\n\n" + rerun
    assert failures.classify(1, chained, npu_bridge_dir=NPU_BRIDGE).category == "data"
    # a graph error with nothing about data, raised inside npu_bridge, stays npu_bridge's
    assert failures.classify(1, rerun, npu_bridge_dir=NPU_BRIDGE).category == "npu_bridge"
