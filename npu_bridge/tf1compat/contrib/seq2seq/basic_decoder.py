"""tf.contrib.seq2seq.BasicDecoder: one cell step, an optional output layer, and the helper's sampling and next
inputs, emitting BasicDecoderOutput(rnn_output, sample_id) as TF 1.15's."""
import collections

import tensorflow as tf

from npu_bridge.tf1compat.contrib.seq2seq.decoder import Decoder
from npu_bridge.tf1compat.contrib.seq2seq.helper import Helper


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput", ("rnn_output", "sample_id"))):
    """One step's (or, stacked, the whole decode's) cell outputs and sample ids."""


class BasicDecoder(Decoder):
    """Decodes with an RNN cell driven by a Helper; output_layer (e.g. a Dense projection to the vocabulary) is
    applied to the cell output before sampling."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        if not callable(cell):
            raise TypeError(f"BasicDecoder: cell must be callable (an RNNCell), got {type(cell).__name__}")
        if not isinstance(helper, Helper):
            raise TypeError(f"BasicDecoder: helper must be a Helper, received: {type(helper).__name__}")
        if output_layer is not None and not callable(output_layer):
            raise TypeError(f"BasicDecoder: output_layer must be a Layer, received: {type(output_layer).__name__}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        shapes = tf.nest.map_structure(lambda s: tf.TensorShape([None]).concatenate(s), size)
        layer_shapes = self._output_layer.compute_output_shape(shapes)
        return tf.nest.map_structure(lambda s: s[1:], layer_shapes)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(), sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = tf.nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(tf.nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        with tf.compat.v1.name_scope(name, "BasicDecoderStep", (time, inputs, state)):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
