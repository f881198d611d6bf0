"""Swapping a running application's code: allowed when the new application's graph keeps its shape.

A running application's state and streams are named by its graph: a window's or a join's store by its op
id, an intermediate stream by its partition_by's op id, and the partition counts of every stream are fixed
in the job's plan (``app.plan``). A hot swap (``swap(NewApp)``) may change what the operators compute (the
functions of a map, a filter, a window's fold) but not that shape. :func:`check_same_shape` compares the
two graphs, described under the running job's config: the op ids, each op's kind and its upstream ops, the
streams each input and output names, and for a window its kind, size and time characteristic. Since the
plan's partition counts follow from the streams and the config alone, a graph of the same shape has the
same partition counts. A change is a :class:`SamzaError` listing what differs.

:func:`swap_task_factory` then gives the operator task factory the container swaps in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.operators.application import describe_application, is_application
from samza_nb.operators.graph import InputSpec, PartitionBySpec, SendToSpec, WindowSpec
from samza_nb.operators.task import operator_task_factory

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.operators.graph import ApplicationGraph, OperatorSpec

Shape = Mapping[str, tuple[str, ...]]
"""An op id's shape: its kind, its upstream op ids and what fixes its state or stream, as words."""


def graph_shape(graph: ApplicationGraph) -> dict[str, tuple[str, ...]]:
    """The shape of every op of ``graph``, by op id (see the module)."""
    return {spec.op_id: _shape_of(spec) for spec in graph.operators}


def _shape_of(spec: OperatorSpec) -> tuple[str, ...]:
    words = [spec.kind.value, "after " + ",".join(up.op_id for up in spec.prev)]
    if isinstance(spec, InputSpec | PartitionBySpec | SendToSpec):
        words.append(f"stream {spec.stream_id}")
    if isinstance(spec, WindowSpec) and spec.window is not None:
        window = spec.window
        words.append(f"{window.kind.value} window of {window.size_ms} ms ({window.time.value} time)")
    return tuple(words)


def shape_changes(old: Shape, new: Shape) -> list[str]:
    """What differs between two shapes, in words (empty when they are the same)."""
    changes = [f"op {op!r} is gone" for op in old if op not in new]
    changes += [f"op {op!r} is new" for op in new if op not in old]
    for op, before in old.items():
        after = new.get(op)
        if after is not None and after != before:
            changes.append(f"op {op!r} was {' '.join(before)}, now {' '.join(after)}")
    return changes


def check_same_shape(old_app: Any, new_app: Any, config: Config) -> None:
    """A SamzaError listing every difference when ``new_app``'s graph does not keep ``old_app``'s shape
    under ``config`` (the running job's), or when ``new_app`` is not a StreamApplication or cannot be
    described (its own error, named)."""
    if not is_application(new_app):
        raise SamzaError(f"{new_app!r} is not a StreamApplication: a running application swaps in another")
    old = graph_shape(describe_application(old_app, config).graph)
    try:
        new = graph_shape(describe_application(new_app, config).graph)
    except SamzaError:
        raise
    except Exception as exc:
        raise SamzaError(
            f"swap refused: {_name(new_app)}.describe failed: {type(exc).__name__}: {exc}; the job goes on "
            "with its old code"
        ) from exc
    changes = shape_changes(old, new)
    if changes:
        raise SamzaError(
            f"swap refused: {_name(new_app)} does not keep the running application's shape (its op ids name "
            f"its stores and streams): {'; '.join(changes)}. The job goes on with its old code; stop it and "
            "run the new application to change the graph"
        )


def swap_task_factory(old_app: Any, new_app: Any, config: Config) -> Callable[[], Any]:
    """The operator task factory of ``new_app``, for swapping into a running job of ``old_app`` under
    ``config``; a SamzaError when its graph does not keep the shape (:func:`check_same_shape`)."""
    check_same_shape(old_app, new_app, config)
    return operator_task_factory(new_app)


def _name(app: Any) -> str:
    return app.__qualname__ if isinstance(app, type) else type(app).__qualname__


__all__ = ["check_same_shape", "graph_shape", "shape_changes", "swap_task_factory"]
