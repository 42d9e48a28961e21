"""TF1-era Keras training through set_keras_session_npu_config, as migrated Keras scripts do it.

The NpuOptimizer entry (precision_mode allow_fp32_to_fp16) goes into the Keras session; the model is built
and fitted with tf.keras in graph mode, then the session is closed.
"""
import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_fp32_to_fp16")
sess = set_keras_session_npu_config(config=config)

rng = np.random.RandomState(5)
x_train = rng.randn(256, 20).astype(np.float32)
y_train = (x_train[:, :10].sum(axis=1) > 0).astype(np.float32)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(16, activation="relu", input_shape=(20,)),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=4, verbose=0)
losses = history.history["loss"]
assert tf.keras.backend.get_session() is sess
print(f"keras loss {losses[0]:.4f} -> {losses[-1]:.4f}")
sess.close()
if not losses[-1] < losses[0]:
    raise SystemExit("training did not progress")
