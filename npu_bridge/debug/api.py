"""The comparison from Python, for code that drives its own sessions (the CLI uses the same observer).

    from npu_bridge.debug import compare_step, comparing

    loss_value, comparison = compare_step(sess, loss, {x: batch})   # one run, compared with float32
    print(comparison.summary())                                      # the first op breaking accuracy, its line
    comparison.write_csv("step.csv")                                 # msaccucmp's columns + local errors

    with comparing(steps={0, 10}) as seen:                           # runs inside, at those steps (None: all)
        train(sess)
    for comparison in seen.comparisons: ...
"""
import contextlib

from npu_bridge.debug.compare import CompareObserver
from npu_bridge.runtime import observers


def compare_step(sess, fetches, feed_dict=None, options=None, run_metadata=None):
    """Run `sess.run(fetches, feed_dict)` once and compare that step with float32: (results, StepComparison).

    The run is the user's real step (variables update as they would); the comparison is of the values before the
    update. ValueError when the run executed no op the emulated NPU reduces (nothing to compare) or `sess` is not
    an emulated NPU session.
    """
    observer = CompareObserver(steps=None)
    observers.add_observer(observer)
    try:
        results = sess.run(fetches, feed_dict, options=options, run_metadata=run_metadata)
    finally:
        observers.remove_observer(observer)
        observer.close()
    if not observer.comparisons:
        raise ValueError("compare_step: the run executed no op that the emulated NPU computes in a reduced dtype "
                         "(is the session configured with the NpuOptimizer and a mixed precision mode?)")
    return results, observer.comparisons[0]


class _EveryStep:
    def __contains__(self, step):
        return True


@contextlib.contextmanager
def comparing(steps=None):
    """Compare the runs inside the block at `steps` (step numbers, counted per fetch signature from 0; None:
    every step). Yields the observer: its `comparisons` list fills as the steps run.
    """
    observer = CompareObserver(steps=_EveryStep() if steps is None else frozenset(steps))
    observers.add_observer(observer)
    try:
        yield observer
    finally:
        observers.remove_observer(observer)
        observer.close()
