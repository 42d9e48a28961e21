"""`BaseSession._make_callable_from_options` on an emulated session.

tf.keras's TF1 graph functions (`backend.function`, used by `Model.fit` under a session set through
`set_keras_session_npu_config`) build CallableOptions from user tensor names and call the session's private
factory directly, so it must resolve those names against the rewritten graph like `run` does.
"""
from tensorflow.python.framework import errors

from npu_bridge.runtime import user_errors
from npu_bridge.runtime.plans import Plan


class OptionsCallable:
    """Runs user CallableOptions (feeds, fetches, targets, tensor connections, run options) emulated."""

    def __init__(self, emulation, callable_options):
        self._emulation = emulation
        self._options = type(callable_options)()
        self._options.CopyFrom(callable_options)
        self._fetch_count = len(callable_options.fetch)
        self._run_options = callable_options.run_options if callable_options.HasField("run_options") else None
        self._plan = None
        self._plan_for(emulation.current_program())

    def __call__(self, *args, run_metadata=None):
        plan = self._plan_for(self._emulation.current_program())
        try:
            values = plan.execute(args, self._run_options, run_metadata, self._emulation.stepper())
        except errors.OpError as error:
            raise user_errors.translate(error, self._emulation.graph)
        return values[:self._fetch_count]

    def _plan_for(self, program):
        """The plan against `program`; built again only when the inner session was rebuilt."""
        if self._plan is None or self._plan.program is not program:
            options = self._options
            self._plan = Plan(program, self._emulation.graph, list(options.fetch) + list(options.target),
                              list(options.feed), self._emulation.options.iterations_per_loop,
                              connections=[(c.from_tensor, c.to_tensor) for c in options.tensor_connection],
                              owner=self._emulation.owner)
        return self._plan
