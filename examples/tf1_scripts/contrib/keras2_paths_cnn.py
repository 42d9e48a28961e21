"""A Keras 2-path CNN written the way ported ModelZoo Keras scripts are, in their two styles.

First, standalone Keras 2 (the OpenPose action / person re-identification ports): `keras.utils.np_utils` labels,
a custom layer on `keras.engine.topology.Layer`, layers from `keras.layers.convolutional`, `.normalization` and
`.advanced_activations`, a functional `keras.models.Model` fitted on a session with the NpuOptimizer given to
`K.set_session`. Then TF 1.15's own Keras copy (the Densenet-3D port): `tensorflow.python.keras.layers` applied
to placeholders, `tensorflow.python.keras.backend.learning_phase` fed, trained with a tf.train optimizer under
NPULossScaleOptimizer in a session loop.
"""
import numpy as np
import tensorflow as tf
import tensorflow.python.keras as tf_python_keras
from keras import backend as K
from keras.engine.topology import Layer
from keras.layers import Dense, Flatten, Input
from keras.layers.advanced_activations import LeakyReLU
from keras.layers.convolutional import Conv2D, MaxPooling2D
from keras.layers.normalization import BatchNormalization
from keras.models import Model
from keras.optimizers import Adam
from keras.utils import np_utils
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
from tensorflow.python.keras.backend import learning_phase
from tensorflow.python.keras.layers import Dropout, GlobalAveragePooling2D, concatenate
from npu_bridge.npu_init import *


class Scale(Layer):
    """A learned per-channel scale: the kind of small custom layer Keras 2 ports define."""

    def build(self, input_shape):
        self.gamma = self.add_weight(name="gamma", shape=(int(input_shape[-1]),), initializer="ones",
                                     trainable=True)
        super(Scale, self).build(input_shape)

    def call(self, inputs):
        return inputs * self.gamma

    def compute_output_shape(self, input_shape):
        return input_shape


def npu_session():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return tf.Session(config=config)


def images_and_classes(count, seed):
    """8x8 images whose class says which half is brighter."""
    rng = np.random.RandomState(seed)
    images = rng.rand(count, 8, 8, 1).astype(np.float32)
    classes = (images[:, :, :4].mean(axis=(1, 2, 3)) > images[:, :, 4:].mean(axis=(1, 2, 3))).astype(int)
    images[:, :, :4] += 0.3 * classes[:, None, None, None]
    return images, classes


def keras2_model():
    inputs = Input(shape=(8, 8, 1), name="image")
    net = Conv2D(8, (3, 3), padding="same", name="conv1")(inputs)
    net = BatchNormalization(momentum=0.8, name="bn1")(net)
    net = LeakyReLU(alpha=0.1)(net)
    net = MaxPooling2D((2, 2))(net)
    net = Scale(name="scale")(Flatten()(net))
    return Model(inputs=inputs, outputs=Dense(2, activation="softmax", name="classes")(net))


def main():
    tf.set_random_seed(0)
    images, classes = images_and_classes(256, seed=1)
    labels = np_utils.to_categorical(classes, 2)

    sess = npu_session()
    K.set_session(sess)
    model = keras2_model()
    model.compile(optimizer=Adam(lr=0.01), loss="categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(images, labels, batch_size=32, epochs=8, verbose=0)
    accuracy = model.evaluate(images, labels, verbose=0)[1]
    losses = history.history["loss"]
    print(f"keras fit loss {losses[0]:.4f} -> {losses[-1]:.4f} accuracy {accuracy:.3f}")
    print("variables " + " ".join(sorted(weight.name.split(":")[0] for weight in model.weights)))

    with tf.Graph().as_default():
        tf.set_random_seed(0)
        image_node = tf.placeholder(tf.float32, [None, 8, 8, 1])
        label_node = tf.placeholder(tf.float32, [None, 2])
        net = tf_python_keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="tf_conv")(image_node)
        net = Dropout(0.1)(concatenate([net, image_node]))
        logits = tf_python_keras.layers.Dense(2, name="tf_logits")(GlobalAveragePooling2D()(net))
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=label_node, logits=logits))
        loss_scale_manager = ExponentialUpdateLossScaleManager(init_loss_scale=2 ** 10, incr_every_n_steps=100,
                                                               decr_every_n_nan_or_inf=2, decr_ratio=0.5)
        train_op = NPULossScaleOptimizer(tf.train.AdamOptimizer(0.05), loss_scale_manager).minimize(loss)
        step_losses = []
        with npu_session() as session:
            session.run(tf.global_variables_initializer())
            for step in range(40):
                batch = slice(step * 32 % 256, step * 32 % 256 + 32)
                step_losses.append(session.run([train_op, loss], {image_node: images[batch],
                                                                  label_node: labels[batch],
                                                                  learning_phase(): 1})[1])
    first, last = np.mean(step_losses[:5]), np.mean(step_losses[-5:])
    print(f"steps 40 loss {first:.4f} -> {last:.4f}")
    if not (losses[-1] < losses[0] and last < first):
        raise SystemExit("training did not progress")


if __name__ == "__main__":
    main()
