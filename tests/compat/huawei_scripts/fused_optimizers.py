"""A BERT-family port's optimizers: AdamWeightDecay through npu_ops.adam_apply_one(_with_decay)_assign and LAMB
through tbe.npu_vector_ops, as BertNV_Series / BertLarge write them; trained with sess.run on the emulated NPU."""
import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *
from npu_bridge.estimator import npu_ops
from npu_bridge.tbe import npu_vector_ops


class AdamWeightDecayOptimizer(tf.train.Optimizer):
    def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 name="AdamWeightDecayOptimizer"):
        super(AdamWeightDecayOptimizer, self).__init__(False, name)
        self.learning_rate = tf.identity(learning_rate, name="learning_rate")
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for (grad, param) in grads_and_vars:
            with tf.name_scope("apply_one_adam"):
                param_name = param.op.name
                m = tf.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(), dtype=tf.float32,
                                    trainable=False, initializer=tf.zeros_initializer())
                v = tf.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(), dtype=tf.float32,
                                    trainable=False, initializer=tf.zeros_initializer())
                if "bias" not in param_name:
                    assignments.append(npu_ops.adam_apply_one_with_decay_assign(
                        grad, v, m, param, self.learning_rate, self.beta_1, 1.0 - self.beta_1, self.beta_2,
                        1.0 - self.beta_2, self.weight_decay_rate, self.epsilon))
                else:
                    assignments.append(npu_ops.adam_apply_one_assign(
                        grad, v, m, param, self.learning_rate, self.beta_1, 1.0 - self.beta_1, self.beta_2,
                        1.0 - self.beta_2, self.epsilon))
        new_global_step = global_step + 1
        return tf.group(*assignments, global_step.assign(new_global_step), name=name)


class LAMBOptimizer(tf.train.Optimizer):
    def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 name="LAMBOptimizer"):
        super(LAMBOptimizer, self).__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        steps = tf.cast(global_step + 1, tf.float32)
        assignments = []
        for (grad, var) in grads_and_vars:
            m = tf.get_variable(var.op.name + "/lamb_m", var.shape.as_list(), tf.float32, tf.zeros_initializer(),
                                trainable=False)
            v = tf.get_variable(var.op.name + "/lamb_v", var.shape.as_list(), tf.float32, tf.zeros_initializer(),
                                trainable=False)
            do_use_weight = tf.cast("bias" not in var.op.name, tf.float32)
            update, next_v, next_m = npu_vector_ops.lamb_apply_optimizer_assign(
                grad, v, m, var, self.beta_1, 1.0 - self.beta_1, self.beta_2, 1.0 - self.beta_2, self.epsilon, steps,
                do_use_weight, self.weight_decay_rate)
            w_norm = tf.norm(var, ord=2)
            g_norm = tf.norm(update, ord=2)
            assignments.append(npu_vector_ops.lamb_apply_weight_assign(w_norm, g_norm, self.learning_rate, update,
                                                                       var))
        return tf.group(*assignments, global_step.assign_add(1), name=name)


def train(optimizer_class, scope):
    rng = np.random.RandomState(0)
    features = rng.normal(size=(64, 8)).astype(np.float32)
    targets = features @ rng.normal(size=(8, 1)).astype(np.float32) + 0.5
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 8])
        y = tf.placeholder(tf.float32, [None, 1])
        with tf.variable_scope(scope):
            hidden = tf.layers.dense(x, 16, activation=tf.nn.relu, name="dense")
            prediction = tf.layers.dense(hidden, 1, name="out")
        loss = tf.reduce_mean(tf.square(prediction - y))
        global_step = tf.train.get_or_create_global_step()
        optimizer = optimizer_class(0.01)
        train_op = optimizer.apply_gradients(optimizer.compute_gradients(loss), global_step=global_step)
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["use_off_line"].b = True
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
        config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(60):
                _, value = sess.run([train_op, loss], {x: features, y: targets})
                losses.append(value)
            print(scope, "first", losses[0], "last", losses[-1], "steps", sess.run(global_step))


train(AdamWeightDecayOptimizer, "adam")
train(LAMBOptimizer, "lamb")
