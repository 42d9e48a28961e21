"""tf.contrib.seq2seq's attention: BahdanauAttention and LuongAttention mechanisms and the AttentionWrapper cell,
with TF 1.15's arithmetic and variable names, so NMT-style ports build, train and restore their checkpoints.

Names as TF 1.15 made them: `memory_layer/kernel` where the mechanism is built; under the wrapper's scope
(`.../attention_wrapper/`) the wrapped cell's variables, `bahdanau_attention/query_layer/kernel`,
`bahdanau_attention/attention_v` (`attention_g`, `attention_b` when normalize), `luong_attention/attention_g` when
scale, and `attention_layer/kernel`. The monotonic mechanisms are not provided (the contrib error names
tensorflow_addons.seq2seq).
"""
import collections
import math

import numpy as np
import tensorflow as tf

from npu_bridge.tf1compat.contrib import rnn

v1 = tf.compat.v1


def _dense_class():
    """TF 1.15's tf.layers.Dense (variables from the variable scope it is first called in); from tf_keras where
    TensorFlow routes tf.compat.v1.layers to Keras 3, which has none."""
    try:
        return v1.layers.Dense
    except AttributeError:
        from tf_keras.src.legacy_tf_layers import core

        return core.Dense


_Dense = _dense_class()


def _static_or_dynamic(tensor, axis):
    return tf.compat.dimension_value(tensor.shape[axis]) or tf.shape(tensor)[axis]


def _mask_memory(memory, memory_sequence_length):
    """Memory entries past each sequence's length zeroed, so they add nothing to keys or contexts."""
    memory = tf.convert_to_tensor(memory, name="memory")
    if memory.shape.ndims is not None and memory.shape.ndims < 3:
        raise ValueError(f"attention mechanism: memory {memory.name} must be [batch_size, max_time, depth], "
                         f"got shape {memory.shape}")
    if memory_sequence_length is None:
        return memory
    mask = tf.sequence_mask(memory_sequence_length, maxlen=tf.shape(memory)[1], dtype=memory.dtype)
    extra_dims = memory.shape.ndims - 2
    return memory * tf.reshape(mask, tf.concat([tf.shape(mask), tf.ones([extra_dims], tf.int32)], 0))


def _mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    mask = tf.sequence_mask(memory_sequence_length, maxlen=tf.shape(score)[1])
    return tf.where(mask, score, score_mask_value * tf.ones_like(score))


class _BaseAttentionMechanism:
    """Keys (the memory through memory_layer) and values (the masked memory), and the probability function over
    masked scores; subclasses score a query against the keys."""

    def __init__(self, memory, memory_sequence_length, probability_fn, query_layer, memory_layer,
                 score_mask_value, name):
        if probability_fn is None:
            probability_fn = tf.nn.softmax
        if not callable(probability_fn):
            raise TypeError(f"{name}: probability_fn must be callable, saw type: {type(probability_fn).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self._name = name
        with v1.name_scope(None, "BaseAttentionMechanismInit", tf.nest.flatten(memory)):
            self._values = _mask_memory(memory, memory_sequence_length)
            self._keys = memory_layer(self._values) if memory_layer is not None else self._values
            if score_mask_value is None:
                score_mask_value = self._values.dtype.as_numpy_dtype(-np.inf)
            self._probability_fn = lambda score, state: probability_fn(
                _mask_score(score, memory_sequence_length, score_mask_value), state)
            self._batch_size = _static_or_dynamic(self._keys, 0)
            self._alignments_size = _static_or_dynamic(self._keys, 1)

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        return self._values

    @property
    def keys(self):
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    @property
    def dtype(self):
        return self._values.dtype

    def initial_alignments(self, batch_size, dtype):
        """Zero alignments [batch_size, max_time]: the first step has attended to nothing."""
        return tf.zeros(tf.stack([batch_size, self._alignments_size]), dtype=dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention (Luong et al. 2015): score = query . keys, times a learned scalar `attention_g`
    (initialised to 1) when scale. The query depth must equal num_units."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False, probability_fn=None,
                 score_mask_value=None, dtype=None, custom_key_value_fn=None, name="LuongAttention"):
        if custom_key_value_fn is not None:
            raise ValueError(f"{name}: custom_key_value_fn is not supported by npu_bridge's LuongAttention")
        if probability_fn is None:
            probability_fn = tf.nn.softmax
        dtype = dtype or v1.float32
        super().__init__(memory, memory_sequence_length, lambda score, _: probability_fn(score), None,
                         _Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
                         score_mask_value, name)
        self._num_units = num_units
        self._scale = scale

    def __call__(self, query, state):
        with v1.variable_scope(None, "luong_attention", [query]):
            depth = tf.compat.dimension_value(query.shape[-1])
            key_depth = tf.compat.dimension_value(self._keys.shape[-1])
            if depth != key_depth:
                raise ValueError(f"LuongAttention: incompatible or unknown inner dimensions between query and keys."
                                 f" Query ({query.name}) has units: {depth}. Keys have units: {key_depth}. "
                                 f"Perhaps you need to set num_units to the keys' dimension ({depth})?")
            score = tf.squeeze(tf.matmul(tf.expand_dims(query, 1), self._keys, transpose_b=True), [1])
            if self._scale:
                gain = v1.get_variable("attention_g", dtype=query.dtype, initializer=v1.ones_initializer, shape=())
                score = gain * score
        alignments = self._probability_fn(score, state)
        return alignments, alignments


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention (Bahdanau et al. 2015): score = sum(v * tanh(keys + query_layer(query))); with normalize
    (weight normalisation, Salimans & Kingma 2016) v becomes g * v / |v| and a bias b is added inside the tanh."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False, probability_fn=None,
                 score_mask_value=None, dtype=None, custom_key_value_fn=None, name="BahdanauAttention"):
        if custom_key_value_fn is not None:
            raise ValueError(f"{name}: custom_key_value_fn is not supported by npu_bridge's BahdanauAttention")
        if probability_fn is None:
            probability_fn = tf.nn.softmax
        dtype = dtype or v1.float32
        super().__init__(memory, memory_sequence_length, lambda score, _: probability_fn(score),
                         _Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
                         _Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
                         score_mask_value, name)
        self._num_units = num_units
        self._normalize = normalize

    def __call__(self, query, state):
        with v1.variable_scope(None, "bahdanau_attention", [query]):
            processed_query = tf.expand_dims(self._query_layer(query), 1)
            dtype = processed_query.dtype
            num_units = tf.compat.dimension_value(self._keys.shape[2]) or tf.shape(self._keys)[2]
            v = v1.get_variable("attention_v", [num_units], dtype=dtype)
            if self._normalize:
                gain = v1.get_variable("attention_g", dtype=dtype, shape=(),
                                       initializer=v1.constant_initializer(math.sqrt(1.0 / num_units)))
                bias = v1.get_variable("attention_b", [num_units], dtype=dtype, initializer=v1.zeros_initializer())
                v = gain * v * tf.math.rsqrt(tf.reduce_sum(tf.square(v)))
                score = tf.reduce_sum(v * tf.tanh(self._keys + processed_query + bias), [2])
            else:
                score = tf.reduce_sum(v * tf.tanh(self._keys + processed_query), [2])
        alignments = self._probability_fn(score, state)
        return alignments, alignments


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState",
        ("cell_state", "attention", "time", "alignments", "alignment_history", "attention_state"))):
    """The wrapped cell's state, the last attention vector, the step, the alignments (one per mechanism), their
    TensorArray history (when alignment_history) and the mechanisms' own states."""

    def clone(self, **kwargs):
        """A copy with some fields replaced (e.g. cell_state=encoder_state); tensors keep the static shapes they
        replace, as TF 1.15's clone does, so dynamic_rnn's shape checks still pass."""
        def with_same_shape(old, new):
            if isinstance(old, tf.Tensor) and isinstance(new, tf.Tensor):
                new.set_shape(old.shape)
            return new

        return tf.nest.map_structure(with_same_shape, self, super()._replace(**kwargs))


def _item_or_tuple(items):
    items = tuple(items)
    return items[0] if len(items) == 1 else items


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    """(attention, alignments, next_attention_state): the context is the alignment-weighted sum of the values,
    concatenated with the cell output and projected by attention_layer when there is one."""
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = tf.squeeze(tf.matmul(tf.expand_dims(alignments, 1), attention_mechanism.values), [1])
    if attention_layer is None:
        return context, alignments, next_attention_state
    return attention_layer(tf.concat([cell_output, context], 1)), alignments, next_attention_state


class AttentionWrapper(rnn.RNNCell):
    """An RNN cell whose input is cell_input_fn(inputs, previous attention) (concatenation by default) and whose
    output is the attention vector (or the cell output when output_attention=False); the state is an
    AttentionWrapperState."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None, alignment_history=False,
                 cell_input_fn=None, output_attention=True, initial_cell_state=None, name=None,
                 attention_layer=None, attention_fn=None):
        super().__init__(name=name)
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for mechanism in mechanisms:
            if not isinstance(mechanism, _BaseAttentionMechanism):
                raise TypeError("AttentionWrapper: attention_mechanism must be an AttentionMechanism (or a list of "
                                f"them), saw type: {type(mechanism).__name__}")
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: tf.concat([inputs, attention], -1)  # noqa: E731
        elif not callable(cell_input_fn):
            raise TypeError(f"AttentionWrapper: cell_input_fn must be callable, saw type: "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("AttentionWrapper: only one of attention_layer_size and attention_layer should be set")
        self._attention_layers, self._attention_layer_size = self._make_attention_layers(
            cell, mechanisms, attention_layer_size, attention_layer)
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._attention_fn = attention_fn or _compute_attention
        self._initial_cell_state = initial_cell_state

    def _make_attention_layers(self, cell, mechanisms, attention_layer_size, attention_layer):
        """(layers or None, the attention vector's depth): one `attention_layer` Dense per mechanism, the given
        layer(s), or none (the attention is the context, as deep as the memory)."""
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size) if isinstance(attention_layer_size, (list, tuple)) \
                else (attention_layer_size,)
            if len(sizes) != len(mechanisms):
                raise ValueError(f"AttentionWrapper: attention_layer_size must have the same length as "
                                 f"attention_mechanism ({len(mechanisms)}), saw: {len(sizes)}")
            layers = tuple(_Dense(size, name="attention_layer", use_bias=False, dtype=mechanism.dtype)
                           for size, mechanism in zip(sizes, mechanisms))
            return layers, sum(sizes)
        if attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, (list, tuple)) else (attention_layer,)
            if len(layers) != len(mechanisms):
                raise ValueError(f"AttentionWrapper: attention_layer must have the same length as "
                                 f"attention_mechanism ({len(mechanisms)}), saw: {len(layers)}")
            depth = sum(tf.compat.dimension_value(layer.compute_output_shape(
                [None, cell.output_size + tf.compat.dimension_value(mechanism.values.shape[-1])])[-1])
                for layer, mechanism in zip(layers, mechanisms))
            return layers, depth
        return None, sum(tf.compat.dimension_value(mechanism.values.shape[-1]) for mechanism in mechanisms)

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size,
            time=tf.TensorShape([]),
            attention=self._attention_layer_size,
            alignments=_item_or_tuple(m.alignments_size for m in self._attention_mechanisms),
            attention_state=_item_or_tuple(m.state_size for m in self._attention_mechanisms),
            alignment_history=_item_or_tuple(m.alignments_size if self._alignment_history else ()
                                             for m in self._attention_mechanisms))

    def _checked(self, structure, batch_size, what):
        """`structure` passed through identities that first assert its batch size is the memory's."""
        checks = [tf.debugging.assert_equal(
            batch_size, m.batch_size,
            message=f"AttentionWrapper: the batch size of {what} does not match the attention mechanism's memory "
                    "batch size (tile the memory with tile_batch for beam search)")
                  for m in self._attention_mechanisms]
        with tf.control_dependencies(checks):
            return tf.nest.map_structure(lambda t: tf.identity(t, name=f"checked_{what.replace(' ', '_')}"),
                                         structure)

    def zero_state(self, batch_size, dtype):
        """The first state: the initial cell state (or the cell's zero state), zero attention and alignments,
        step 0 and empty alignment histories."""
        with v1.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            cell_state = self._initial_cell_state
            if cell_state is None:
                cell_state = self._cell.zero_state(batch_size, dtype)
            cell_state = self._checked(cell_state, batch_size, "cell state")
            alignments = [m.initial_alignments(batch_size, dtype) for m in self._attention_mechanisms]
            histories = [tf.TensorArray(dtype=dtype, size=0, dynamic_size=True, element_shape=a.shape)
                         if self._alignment_history else () for a in alignments]
            return AttentionWrapperState(
                cell_state=cell_state,
                time=tf.zeros([], dtype=tf.int32),
                attention=tf.zeros(tf.stack([batch_size, self._attention_layer_size]), dtype=dtype),
                alignments=_item_or_tuple(alignments),
                attention_state=_item_or_tuple(m.initial_state(batch_size, dtype)
                                               for m in self._attention_mechanisms),
                alignment_history=_item_or_tuple(histories))

    def call(self, inputs, state):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"AttentionWrapper: expected state to be an AttentionWrapperState (from zero_state, "
                            f"or its clone), received type {type(state).__name__} instead")
        cell_output, next_cell_state = self._cell(self._cell_input_fn(inputs, state.attention), state.cell_state)
        cell_output = self._checked(cell_output, _static_or_dynamic(cell_output, 0), "cell output")
        states = state.attention_state if self._is_multi else (state.attention_state,)
        histories = state.alignment_history if self._is_multi else (state.alignment_history,)
        attentions, alignments, attention_states, next_histories = [], [], [], []
        for index, mechanism in enumerate(self._attention_mechanisms):
            layer = self._attention_layers[index] if self._attention_layers else None
            attention, alignment, next_attention_state = self._attention_fn(mechanism, cell_output, states[index],
                                                                            layer)
            attentions.append(attention)
            alignments.append(alignment)
            attention_states.append(next_attention_state)
            next_histories.append(histories[index].write(state.time, alignment) if self._alignment_history else ())
        attention = tf.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            alignments=_item_or_tuple(alignments), attention_state=_item_or_tuple(attention_states),
            alignment_history=_item_or_tuple(next_histories))
        return (attention if self._output_attention else cell_output), next_state
