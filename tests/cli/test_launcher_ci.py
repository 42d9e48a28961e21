"""npu-run for CI on real scripts: --seed makes an unseeded script's runs equal; a plain run has the variables a
ModelZoo test/train_full_1p.sh exports (scripts read them with os.environ[...])."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

NPU_RUN = [shutil.which("npu-run")] if shutil.which("npu-run") else [sys.executable, "-m", "npu_bridge"]
VARIABLES = ("RANK_SIZE", "RANK_ID", "DEVICE_ID", "ASCEND_DEVICE_ID", "DEVICE_INDEX", "RANK_ID_START", "JOB_ID")

# Seeds nothing; draws from Python, numpy, the default graph and a graph of its own.
SCRIPT = """
    import json, os, random
    import numpy as np
    import tensorflow as tf

    draws = [random.random(), float(np.random.rand())]
    with tf.Session() as sess:
        draws.append(float(sess.run(tf.random_normal([]))))
    with tf.Graph().as_default():
        value = tf.nn.dropout(tf.ones([8]), rate=0.5) + tf.random_uniform([8])
        with tf.Session() as sess:
            draws.extend(sess.run(value).tolist())
    print("RESULT " + json.dumps({"draws": draws, "env": {k: os.environ.get(k) for k in %r}}))
""" % (VARIABLES,)


def run(tmp_path, *options, env=None):
    script = tmp_path / "unseeded.py"
    script.write_text(textwrap.dedent(SCRIPT))
    environment = {k: v for k, v in os.environ.items() if k not in VARIABLES and k != "NPU_BRIDGE_SEED"}
    environment.update(TF_CPP_MIN_LOG_LEVEL="3", **(env or {}))
    done = subprocess.run([*NPU_RUN, *options, str(script)], capture_output=True, text=True, env=environment,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    [line] = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(line[len("RESULT "):])


def test_seed_gives_an_unseeded_script_the_same_draws_and_a_plain_run_the_launch_script_variables(tmp_path):
    first = run(tmp_path, "--seed", "7")
    second = run(tmp_path, "--seed", "7", env={"JOB_ID": "99990001"})
    other = run(tmp_path, "--seed", "8", env={"RANK_SIZE": "1", "DEVICE_ID": "3"})
    assert first["draws"] == second["draws"]
    assert all(a != b for a, b in zip(first["draws"][:3], other["draws"][:3]))
    assert other["draws"][3:] != first["draws"][3:]
    assert first["env"] == {"RANK_SIZE": "1", "RANK_ID": "0", "DEVICE_ID": "0", "ASCEND_DEVICE_ID": "0",
                            "DEVICE_INDEX": "0", "RANK_ID_START": "0", "JOB_ID": "10087"}
    assert second["env"]["JOB_ID"] == "99990001"                        # what the user exported is kept
    # RANK_SIZE set: the process belongs to a job someone else launched, and the launcher adds nothing.
    assert other["env"]["DEVICE_ID"] == "3" and other["env"]["RANK_ID"] is None
