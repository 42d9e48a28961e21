"""`tensorflow.contrib.rnn.ops.gen_lstm_ops`: TF 1.15's wrappers of the fused LSTM kernels, which TensorFlow 2
still registers (tf.raw_ops.BlockLSTM, LSTMBlockCell and their gradients, with the gradients wired up), so a
ported fused-LSTM layer builds the same ops with the same arguments and defaults (forget_bias 1, cell_clip 3: a
negative clip turns clipping off) and unpacks the same outputs (i, cs, f, o, ci, co, h). BlockLSTM is the op the
precision pass already maps to the NPU's DynamicRNN."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


def block_lstm(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias=1.0, cell_clip=3.0,
               use_peephole=False, name=None):
    """The LSTM over all time steps of the time-major x [time, batch, input], up to seq_len_max (int64); w is
    [input + units, 4 * units] with gates in the order i, ci, f, o."""
    return tf.raw_ops.BlockLSTM(seq_len_max=seq_len_max, x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci,
                                wcf=wcf, wco=wco, b=b, forget_bias=forget_bias, cell_clip=cell_clip,
                                use_peephole=use_peephole, name=name)


def block_lstm_grad(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h, cs_grad,
                    h_grad, use_peephole, name=None):
    """block_lstm's gradient: (x, cs_prev, h_prev, w, wci, wcf, wco, b) gradients."""
    return tf.raw_ops.BlockLSTMGrad(seq_len_max=seq_len_max, x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci,
                                    wcf=wcf, wco=wco, b=b, i=i, cs=cs, f=f, o=o, ci=ci, co=co, h=h,
                                    cs_grad=cs_grad, h_grad=h_grad, use_peephole=use_peephole, name=name)


def lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias=1.0, cell_clip=3.0, use_peephole=False,
                    name=None):
    """One LSTM step of x [batch, input]: (i, cs, f, o, ci, co, h)."""
    return tf.raw_ops.LSTMBlockCell(x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci, wcf=wcf, wco=wco, b=b,
                                    forget_bias=forget_bias, cell_clip=cell_clip, use_peephole=use_peephole,
                                    name=name)


def lstm_block_cell_grad(x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, cs_grad, h_grad,
                         use_peephole, name=None):
    """lstm_block_cell's gradient: (cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad)."""
    return tf.raw_ops.LSTMBlockCellGrad(x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci, wcf=wcf, wco=wco, b=b,
                                        i=i, cs=cs, f=f, o=o, ci=ci, co=co, cs_grad=cs_grad, h_grad=h_grad,
                                        use_peephole=use_peephole, name=name)


__getattr__ = removed.module_getattr(__name__)
