"""npu-run on the shape most ModelZoo entry scripts have: tf.app.flags, tf.app.run(main), tf.logging, tf.gfile,
a hand-written NpuOptimizer config and loss scaling whose scale is fetched as 'loss_scale:0'."""
import os
import subprocess
import sys
import textwrap

SCRIPT = """
    import numpy as np
    import tensorflow as tf
    from npu_bridge.npu_init import *

    flags = tf.app.flags
    flags.DEFINE_integer("steps", 1, "training steps")
    flags.DEFINE_string("data_dir", "/nonexistent", "data folder")
    FLAGS = flags.FLAGS
    tf.logging.set_verbosity(tf.logging.ERROR)


    def main(_):
        x = tf.placeholder(tf.float32, [None, 4])
        loss = tf.reduce_mean(tf.layers.dense(x, 2))
        manager = ExponentialUpdateLossScaleManager(init_loss_scale=2**32, incr_every_n_steps=1000,
                                                    decr_every_n_nan_or_inf=2, decr_ratio=0.5)
        optimizer = NPULossScaleOptimizer(tf.train.AdamOptimizer(0.01), manager)
        train = optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["use_off_line"].b = True
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
        config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(FLAGS.steps):
                _, scale, step = sess.run([train, "loss_scale:0", tf.train.get_global_step()], {x: np.ones((2, 4))})
        print("data_dir_exists", tf.gfile.Exists(FLAGS.data_dir))
        print("loss_scale", int(scale), "global_step", step)


    if __name__ == "__main__":
        tf.app.run()
"""


def test_tf_app_run_script_with_flags_and_loss_scaling(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-m", "npu_bridge", str(script), "--steps=4",
                             f"--data_dir={tmp_path}"], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert lines["data_dir_exists"] == "True"
    # 2**32 times a float16 gradient overflows: every step is skipped, the scale halves after each 2 bad steps.
    assert lines["loss_scale"] == f"{2 ** 30} global_step 0"
