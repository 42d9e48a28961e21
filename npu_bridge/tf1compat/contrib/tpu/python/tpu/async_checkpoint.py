"""contrib.tpu's AsyncCheckpointSaverHook: on a CPU the checkpoint is written in step, as CheckpointSaverHook does
(the same files; TF 1.15 only moved the writing to a thread)."""
import tensorflow as tf

AsyncCheckpointSaverHook = tf.compat.v1.train.CheckpointSaverHook
