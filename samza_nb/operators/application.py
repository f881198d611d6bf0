"""StreamApplication and the descriptor an application describes itself on."""

from __future__ import annotations

import abc
from typing import Any

from samza_nb.api.config_mapping import ConfigMapping
from samza_nb.config.catalogue import job_id, job_name
from samza_nb.errors import SamzaError
from samza_nb.operators.graph import ApplicationGraph, InputSpec, OpKind
from samza_nb.operators.plan import APP_ID_KEY, APP_NAME_KEY
from samza_nb.operators.stream import MessageStream, OutputStream


class StreamApplication(abc.ABC):
    """A high-level application: ``describe(app)`` declares its inputs, operators and outputs on ``app``
    (a :class:`StreamApplicationDescriptor`). The planner turns the graph into a job (or one job per
    stage); its tasks run the operators."""

    @abc.abstractmethod
    def describe(self, app: StreamApplicationDescriptor) -> None:
        """Declare the application's streams and operators on ``app``."""


class StreamApplicationDescriptor:
    """What ``describe`` builds on: input and output streams by stream id, and the graph they grow.
    ``config`` is the job's config (job.name and job.id name the intermediate streams)."""

    def __init__(self, config: ConfigMapping) -> None:
        self.config = config
        self.graph = ApplicationGraph()
        self._outputs: dict[str, OutputStream] = {}

    def get_input_stream(self, stream_id: str) -> MessageStream:
        """The stream of messages of input ``stream_id`` (its system and physical name come from
        ``streams.<id>.samza.system`` / ``.samza.physical.name``, else the job's default system and the
        id itself). Each input may be asked for once."""
        _stream_id("get_input_stream", stream_id)
        if stream_id in self.graph.inputs:
            raise SamzaError(f"get_input_stream({stream_id!r}) was called twice: keep the stream it returned")
        if stream_id in self._outputs:
            raise SamzaError(
                f"stream {stream_id!r} is used as both an input and an output of the application"
            )
        # Op ids of input specs have a ':', which a user's op id cannot: they never clash.
        spec = InputSpec(f"input:{stream_id}", OpKind.INPUT, stream_id=stream_id)
        self.graph.add(spec)
        return MessageStream(self, spec)

    def get_output_stream(self, stream_id: str) -> OutputStream:
        """The output stream ``stream_id`` (the same object when asked twice)."""
        _stream_id("get_output_stream", stream_id)
        if stream_id in self.graph.inputs:
            raise SamzaError(
                f"stream {stream_id!r} is used as both an input and an output of the application"
            )
        output = self._outputs.get(stream_id)
        if output is None:
            output = self._outputs[stream_id] = OutputStream(self, stream_id)
            self.graph.outputs.append(stream_id)
        return output

    def intermediate_stream_id(self, op_id: str) -> str:
        """The id (and physical name) of the intermediate stream of partition_by ``op_id``:
        ``<job.name>-<job.id>-partition_by-<op_id>``, where ``app.name`` / ``app.id`` (written by the
        planner into the jobs of a split application, whose job names differ) stand for the application's
        own job.name and job.id."""
        return f"{intermediate_stream_prefix(self.config)}{op_id}"


def intermediate_stream_prefix(config: ConfigMapping) -> str:
    """``<job.name>-<job.id>-partition_by-`` (``app.name`` / ``app.id`` standing for them where set): what
    the name of every intermediate stream of the application of ``config`` begins with."""
    name = config.get_str(APP_NAME_KEY, "") or job_name(config)
    ident = config.get_str(APP_ID_KEY, "") or job_id(config)
    return f"{name}-{ident}-partition_by-"


def describe_application(app: Any, config: ConfigMapping) -> StreamApplicationDescriptor:
    """Run ``app.describe`` (``app`` a StreamApplication instance or class) on a new descriptor; a
    SamzaError naming the application when it is not one or declares no input."""
    instance = app() if isinstance(app, type) and issubclass(app, StreamApplication) else app
    if not isinstance(instance, StreamApplication):
        raise SamzaError(
            f"{app!r} is not a StreamApplication (subclass samza_nb.operators.StreamApplication)"
        )
    descriptor = StreamApplicationDescriptor(config)
    instance.describe(descriptor)
    if not descriptor.graph.source_inputs():
        raise SamzaError(
            f"{type(instance).__qualname__}.describe declared no input stream (app.get_input_stream)"
        )
    return descriptor


def is_application(obj: object) -> bool:
    """True for a StreamApplication subclass or instance."""
    return isinstance(obj, StreamApplication) or (
        isinstance(obj, type) and issubclass(obj, StreamApplication)
    )


def _stream_id(what: str, stream_id: object) -> None:
    if not isinstance(stream_id, str) or not stream_id or any(c.isspace() for c in stream_id):
        raise SamzaError(f"{what}: a stream id is a non-empty string without spaces, got {stream_id!r}")


__all__ = [
    "StreamApplication",
    "StreamApplicationDescriptor",
    "describe_application",
    "intermediate_stream_prefix",
    "is_application",
]
