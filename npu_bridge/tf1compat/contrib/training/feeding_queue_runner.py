"""TF 1.15's contrib.training.FeedingQueueRunner: a QueueRunner whose enqueue ops take their inputs from Python,
each run fed by its feed function's dictionary, which ported scripts use to stream numpy batches into a queue."""
import tensorflow as tf


class FeedingQueueRunner(tf.compat.v1.train.QueueRunner):
    """Runs enqueue_ops[i] with feed_dict=feed_fns[i]() in its own thread until the queue closes or the
    coordinator stops; the queue-closed, close and cancel handling is QueueRunner's."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None, feed_fns=None,
                 queue_closed_exception_types=None):
        super().__init__(queue=queue, enqueue_ops=enqueue_ops, close_op=close_op, cancel_op=cancel_op,
                         queue_closed_exception_types=queue_closed_exception_types)
        feed_fns = list(feed_fns or [])
        if feed_fns and len(feed_fns) != len(self.enqueue_ops):
            raise ValueError(f"FeedingQueueRunner needs one feed function per enqueue op: got {len(feed_fns)} "
                             f"for {len(self.enqueue_ops)}")
        self._feed_fns = feed_fns or [None] * len(self.enqueue_ops)

    def _run(self, sess, enqueue_op, coord=None):
        feed_fn = self._feed_fns[self.enqueue_ops.index(enqueue_op)]
        closed = False
        try:
            while not (coord and coord.should_stop()):
                try:
                    sess.run(enqueue_op, feed_dict=feed_fn() if feed_fn else None)
                except self._queue_closed_exception_types:  # noqa: B030  (a tuple of exception classes)
                    closed = True
                    self._count_out(sess, close_queue=True)
                    return
        except Exception as error:
            if not coord:
                with self._lock:
                    self._exceptions_raised.append(error)
                raise
            coord.request_stop(error)
        finally:
            if not closed:
                self._count_out(sess, close_queue=False)

    def _count_out(self, sess, close_queue):
        """One enqueue thread fewer for sess; the last one to see the queue closed runs close_op."""
        with self._lock:
            self._runs_per_session[sess] -= 1
            if close_queue and self._runs_per_session[sess] == 0:
                try:
                    sess.run(self._close_op)
                except tf.errors.OpError:
                    pass        # the queue may already be closed: nothing left to do
