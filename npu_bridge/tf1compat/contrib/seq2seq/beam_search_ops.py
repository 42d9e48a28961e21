"""tf.contrib.seq2seq.gather_tree (TF 1.15's GatherTree op, which TF 2 no longer ships): the full beams traced
back from the last step through the parent ids, with end_token past each beam's length and after its first
end_token."""
import tensorflow as tf


def _check_rank(tensor, rank, what):
    if tensor.shape.ndims is not None and tensor.shape.ndims != rank:
        raise ValueError(f"gather_tree: {what} must have rank {rank}, got shape {tensor.shape}")


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """step_ids, parent_ids: [max_time, batch, beam]; max_sequence_lengths: [batch]; returns [max_time, batch,
    beam] beams, each read backwards from its last step along parent_ids."""
    with tf.compat.v1.name_scope(name, "GatherTree", [step_ids, parent_ids, max_sequence_lengths, end_token]):
        step_ids = tf.convert_to_tensor(step_ids, name="step_ids")
        parent_ids = tf.convert_to_tensor(parent_ids, dtype=step_ids.dtype, name="parent_ids")
        lengths = tf.cast(tf.convert_to_tensor(max_sequence_lengths, name="max_sequence_lengths"), tf.int32)
        end_token = tf.cast(tf.convert_to_tensor(end_token, name="end_token"), step_ids.dtype)
        _check_rank(step_ids, 3, "step_ids")
        _check_rank(parent_ids, 3, "parent_ids")
        _check_rank(lengths, 1, "max_sequence_lengths")
        shape = tf.shape(step_ids)
        max_time, beam_width = shape[0], shape[2]
        own_beam = tf.broadcast_to(tf.range(beam_width, dtype=step_ids.dtype), shape[1:])
        next_parents = tf.concat([parent_ids[1:], own_beam[None]], 0)
        last_step = lengths[:, None] - 1

        def back_one_step(pointer, elems):
            time, ids, parents_after = elems
            traced = tf.gather(parents_after, pointer, batch_dims=1)
            pointer = tf.where(time >= last_step, own_beam, traced)
            beam_ids = tf.where(time < lengths[:, None], tf.gather(ids, pointer, batch_dims=1), end_token)
            return pointer, beam_ids

        _, beams = tf.scan(lambda carry, elems: back_one_step(carry[0], elems),
                           (tf.range(max_time), step_ids, next_parents),
                           initializer=(own_beam, tf.zeros_like(own_beam)), reverse=True)
        ended_before = tf.cumsum(tf.cast(tf.equal(beams, end_token), tf.int32), axis=0, exclusive=True) > 0
        return tf.where(ended_before, end_token, beams)
