"""The operator implementations a task runs (Samza's OperatorImpl family and OperatorImplGraph).

Each operator spec of the job's stage becomes one :class:`~.base.OperatorImpl` per task. Messages travel
as ``(message, timestamp)`` through callables bound once at init (no per-message lookups of the graph);
watermarks and end-of-stream travel through :meth:`~.base.OperatorImpl.advance` and
:meth:`~.base.OperatorImpl.prev_ended`. Window and join state lives in the store named after the op id.
"""
