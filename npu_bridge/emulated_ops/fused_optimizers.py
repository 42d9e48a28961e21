"""The NPU's fused optimizer steps: AdamApplyOne(WithDecay)Assign, LambApply{Optimizer,Weight}Assign, Lars(V2).

Each computes every new value from the values before the step, then writes them back, as the one fused kernel does.
The argument names are the registered ops' (input0..input4, mul0_x..mul4_x, add2_y): BERT-family ports pass
(grad, v, m, var, lr, beta1, 1 - beta1, beta2, 1 - beta2[, weight_decay], epsilon).
"""
import tensorflow.compat.v1 as tf
from tensorflow.python.ops import variables


def _variable(value, op_name, arg):
    """The variable an assigning op writes `arg` back to; a plain tensor has no memory to write to."""
    if not isinstance(value, variables.Variable):      # ref and resource variables alike
        raise TypeError(f"{op_name}: {arg} must be a tf.Variable (the op writes its new value back), "
                        f"got {type(value).__name__}")
    return value


def _assign_all(pairs, name):
    """Write each (variable, value) once every value is computed from the old state."""
    with tf.control_dependencies([value for _, value in pairs]):
        return tf.group(*[tf.assign(var, value) for var, value in pairs], name=name)


def _adam_moments(grad, v, m, mul0_x, mul1_x, mul2_x, mul3_x):
    next_v = v * mul2_x + tf.square(grad) * mul3_x
    next_m = m * mul0_x + grad * mul1_x
    return next_v, next_m


def adam_apply_one_assign(input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x, add2_y,
                          name=None):
    """AdamApplyOneAssign (no outputs; the returned Operation performs the step):

        v <- mul2_x * v + mul3_x * grad^2;  m <- mul0_x * m + mul1_x * grad
        var <- var - lr * m / (sqrt(v) + add2_y)
    with grad, v, m, var, lr = input0..input4.
    """
    v = _variable(input1, "adam_apply_one_assign", "input1 (v)")
    m = _variable(input2, "adam_apply_one_assign", "input2 (m)")
    var = _variable(input3, "adam_apply_one_assign", "input3 (var)")
    with tf.name_scope(name, "AdamApplyOneAssign", [input0, input4]):
        next_v, next_m = _adam_moments(input0, v, m, mul0_x, mul1_x, mul2_x, mul3_x)
        next_var = var - input4 * (next_m / (tf.sqrt(next_v) + add2_y))
        return _assign_all([(v, next_v), (m, next_m), (var, next_var)], "assign")


def adam_apply_one_with_decay_assign(input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x,
                                     mul4_x, add2_y, name=None):
    """AdamApplyOneWithDecayAssign: AdamApplyOneAssign with decoupled weight decay mul4_x:

        var <- var - lr * (m / (sqrt(v) + add2_y) + mul4_x * var)
    """
    v = _variable(input1, "adam_apply_one_with_decay_assign", "input1 (v)")
    m = _variable(input2, "adam_apply_one_with_decay_assign", "input2 (m)")
    var = _variable(input3, "adam_apply_one_with_decay_assign", "input3 (var)")
    with tf.name_scope(name, "AdamApplyOneWithDecayAssign", [input0, input4]):
        next_v, next_m = _adam_moments(input0, v, m, mul0_x, mul1_x, mul2_x, mul3_x)
        update = next_m / (tf.sqrt(next_v) + add2_y) + var * mul4_x
        next_var = var - input4 * update
        return _assign_all([(v, next_v), (m, next_m), (var, next_var)], "assign")


def lamb_apply_optimizer_assign(input0, input1, input2, input3, mul0_x, mul1_x, mul2_x, mul3_x, add2_y, steps,
                                do_use_weight, weight_decay_rate, name=None):
    """LambApplyOptimizerAssign: LAMB's bias-corrected Adam direction; writes v and m, returns (update, v, m).

        v <- mul2_x * v + mul3_x * grad^2;  m <- mul0_x * m + mul1_x * grad
        update = (m / (1 - mul0_x^steps)) / (sqrt(v / (1 - mul2_x^steps)) + add2_y)
                 + do_use_weight * weight_decay_rate * var
    with grad, v, m, var = input0..input3. The returned tensors carry the writes: fetching any of them runs them.
    """
    v = _variable(input1, "lamb_apply_optimizer_assign", "input1 (v)")
    m = _variable(input2, "lamb_apply_optimizer_assign", "input2 (m)")
    with tf.name_scope(name, "LambApplyOptimizerAssign", [input0, input3, steps]):
        next_v, next_m = _adam_moments(input0, v, m, mul0_x, mul1_x, mul2_x, mul3_x)
        m_unbiased = next_m / (1.0 - tf.pow(mul0_x, steps))
        v_unbiased = next_v / (1.0 - tf.pow(mul2_x, steps))
        update = m_unbiased / (tf.sqrt(v_unbiased) + add2_y) + input3 * weight_decay_rate * do_use_weight
        with tf.control_dependencies([update, _assign_all([(v, next_v), (m, next_m)], "assign")]):
            return tf.identity(update, "update"), tf.identity(next_v, "v"), tf.identity(next_m, "m")


def lamb_apply_weight_assign(input0, input1, input2, input3, input4, name=None):
    """LambApplyWeightAssign: LAMB's layer-wise trust ratio step; writes and returns the new var.

        ratio = w_norm / g_norm when both are > 0, else 1;  var <- var - lr * ratio * update
    with w_norm, g_norm, lr, update, var = input0..input4.
    """
    var = _variable(input4, "lamb_apply_weight_assign", "input4 (var)")
    with tf.name_scope(name, "LambApplyWeightAssign", [input0, input1, input2, input3]):
        w_norm = tf.convert_to_tensor(input0, var.dtype.base_dtype)
        g_norm = tf.convert_to_tensor(input1, var.dtype.base_dtype)
        both_positive = tf.logical_and(w_norm > 0, g_norm > 0)
        ratio = tf.where(both_positive, w_norm / tf.where(both_positive, g_norm, tf.ones_like(g_norm)),
                         tf.ones_like(w_norm))
        next_var = var - input2 * ratio * input3
        with tf.control_dependencies([_assign_all([(var, next_var)], "assign")]):
            return tf.identity(next_var, "var")


def lars_v2(input_weight, input_grad, weight_decay, learning_rate, hyperpara=0.001, epsilon=0.00001,
            use_clip=False, name=None):
    """LarsV2: the LARS-scaled gradient of one weight (no write):

        coeff = hyperpara * |w| / (|g| + weight_decay * |w| + epsilon)
        (use_clip: coeff = clip(coeff / learning_rate, 0, 1))
        output = coeff * (g + weight_decay * w)
    """
    with tf.name_scope(name, "LarsV2", [input_weight, input_grad, weight_decay, learning_rate]):
        weight = tf.convert_to_tensor(input_weight)
        grad = tf.convert_to_tensor(input_grad, weight.dtype.base_dtype)
        weight_decay = tf.convert_to_tensor(weight_decay, weight.dtype.base_dtype)
        weight_norm = tf.sqrt(tf.reduce_sum(tf.square(weight)))
        grad_norm = tf.sqrt(tf.reduce_sum(tf.square(grad)))
        coeff = hyperpara * weight_norm / (grad_norm + weight_decay * weight_norm + epsilon)
        if use_clip:
            coeff = tf.clip_by_value(coeff / learning_rate, 0.0, 1.0)
        return coeff * (grad + weight_decay * weight)


def lars(inputs_w, inputs_g, weight_decay, hyperpara=0.001, epsilon=0.00001, name=None):
    """Lars: LarsV2's scaled gradient (without clipping) for each (weight, gradient) pair; a list like inputs_w."""
    inputs_w, inputs_g = list(inputs_w), list(inputs_g)
    if len(inputs_w) != len(inputs_g):
        raise ValueError(f"LARS: inputs_w and inputs_g must pair up, got {len(inputs_w)} weights and "
                         f"{len(inputs_g)} gradients")
    with tf.name_scope(name, "LARS", inputs_w + inputs_g):
        return [lars_v2(w, g, weight_decay, 1.0, hyperpara, epsilon) for w, g in zip(inputs_w, inputs_g)]
