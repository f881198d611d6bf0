"""The high-level API: a StreamApplication describes a graph of operators over message streams
(``map``, ``filter``, ``flat_map``, ``partition_by``, ``window``, ``join``, ``merge``, ``send_to``,
``sink``); the planner turns it into a job whose tasks run the operators, with intermediate streams
carrying watermarks and end-of-stream between stages."""

from samza_nb.operators.application import StreamApplication, StreamApplicationDescriptor
from samza_nb.operators.stream import MessageStream, OutputStream
from samza_nb.operators.values import KV, WindowPane
from samza_nb.operators.windows import Window, Windows

__all__ = [
    "KV",
    "MessageStream",
    "OutputStream",
    "StreamApplication",
    "StreamApplicationDescriptor",
    "Window",
    "WindowPane",
    "Windows",
]
