"""The runtime's speed paths give the same results as the slow ones: the plan cache past its bound, the inner
graph's import, and a graph grown between runs."""
import numpy as np
import tensorflow as tf

from npu_bridge.runtime import plans
from .conftest import npu_config


def test_plan_cache_past_its_bound_keeps_most_plans_of_a_cycle(graph, monkeypatch):
    """Cycling through more fetch sets than the bound once emptied the whole cache on every pass (each run then
    built a new TensorFlow callable); evicting one plan at a time keeps most of the cycle cached."""
    monkeypatch.setattr(plans, "_MAX_CACHED_PLANS", 8)
    x = tf.compat.v1.placeholder(tf.float32, [2])
    outputs = [x * float(i) for i in range(10)]
    with tf.compat.v1.Session(config=npu_config()) as sess:
        built = []
        original = plans.Plan.__init__

        def counting(self, *args, **kwargs):
            built.append(1)
            original(self, *args, **kwargs)

        monkeypatch.setattr(plans.Plan, "__init__", counting)
        for output in outputs:
            sess.run(output, {x: [1.0, 2.0]})
        first_pass = len(built)
        for _ in range(5):
            for i, output in enumerate(outputs):
                np.testing.assert_array_equal(sess.run(output, {x: [1.0, 2.0]}), [float(i), 2.0 * i])
        program = sess._npu_emulation.program
        assert len(program.plans) <= 8
        assert first_pass == 10
        assert len(built) - first_pass < 0.6 * 50, "most runs of the later passes must find their plan cached"
