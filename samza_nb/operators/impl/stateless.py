"""The stateless operators: map, filter, flat_map, merge, send_to and sink. Each keeps the timestamp of
the message it was given. They are inlined into the task's compiled chains (:mod:`.compile`): each gives
its source lines for a message in a variable (the timestamp is ``ts``)."""

from __future__ import annotations

from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream
from samza_nb.operators.graph import FilterSpec, FlatMapSpec, MapSpec, SendToSpec, SinkSpec
from samza_nb.operators.impl.base import OperatorImpl, OpRuntime
from samza_nb.operators.impl.compile import Inline
from samza_nb.operators.values import KV


class StatelessImpl(OperatorImpl):
    """An operator that is always inlined."""

    @property
    def inlinable(self) -> bool:
        return True


class MapImpl(StatelessImpl):
    """``fn(message)`` downstream."""

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        assert isinstance(self.spec, MapSpec)
        fn = f"{prefix}_map"
        return Inline((f"{out} = {fn}({var})",), {fn: self.spec.fn}, output=out)


class FilterImpl(StatelessImpl):
    """The messages with a true ``fn(message)`` downstream."""

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        assert isinstance(self.spec, FilterSpec)
        fn = f"{prefix}_filter"
        return Inline((f"if {fn}({var}):",), {fn: self.spec.fn}, opens=True, output=var)


class FlatMapImpl(StatelessImpl):
    """Each message of ``fn(message)`` downstream."""

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        assert isinstance(self.spec, FlatMapSpec)
        fn = f"{prefix}_flat_map"
        return Inline((f"for {out} in {fn}({var}):",), {fn: self.spec.fn}, opens=True, output=out)


class MergeImpl(StatelessImpl):
    """Every input's messages downstream as they come."""

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        return Inline((), output=var)


class SendToImpl(StatelessImpl):
    """Sends each message to an output stream: a ``KV`` as key and value, anything else as the message
    with no key, both with the message's timestamp."""

    def __init__(self, spec: SendToSpec, runtime: OpRuntime, system_stream: SystemStream) -> None:
        super().__init__(spec, runtime)
        self.system_stream = system_stream

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        stream = f"{prefix}_stream"
        return Inline(
            (
                f"if type({var}) is KV:",
                f"    collector.send(Envelope({stream}, {var}[1], {var}[0], None, None, ts))",
                "else:",
                f"    collector.send(Envelope({stream}, {var}, None, None, None, ts))",
            ),
            {
                stream: self.system_stream,
                "KV": KV,
                "Envelope": OutgoingMessageEnvelope,
            },
        )


class SinkImpl(StatelessImpl):
    """Calls ``fn(message, collector, coordinator)``."""

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        assert isinstance(self.spec, SinkSpec)
        fn = f"{prefix}_sink"
        return Inline(
            (f"{fn}({var}, collector, coordinator)",),
            {fn: self.spec.fn},
        )


__all__ = ["FilterImpl", "FlatMapImpl", "MapImpl", "MergeImpl", "SendToImpl", "SinkImpl", "StatelessImpl"]
