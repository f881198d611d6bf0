"""The operators one task runs (Samza's OperatorImplGraph): the stage's part of the application graph,
instantiated for the task, its state opened and its chains compiled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.operators.graph import (
    ApplicationGraph,
    FilterSpec,
    FlatMapSpec,
    InputSpec,
    JoinSpec,
    MapSpec,
    MergeSpec,
    OperatorSpec,
    PartitionBySpec,
    SendToSpec,
    SinkSpec,
    WindowSpec,
)
from samza_nb.operators.impl.base import WATERMARK_MAX, OperatorImpl, OpRuntime
from samza_nb.operators.impl.compile import ChainCompiler, Process, ProcessHooks
from samza_nb.operators.impl.join import JoinImpl
from samza_nb.operators.impl.stateless import (
    FilterImpl,
    FlatMapImpl,
    MapImpl,
    MergeImpl,
    SendToImpl,
    SinkImpl,
)
from samza_nb.operators.impl.streams import InputImpl, PartitionByImpl
from samza_nb.operators.impl.window import window_impl
from samza_nb.operators.plan import APP_PLAN_KEY, ApplicationPlan, StreamPlan


@dataclass
class TaskGraph:
    """A task's operators: ``operators`` upstream first, the input operator of each input stream of the
    stage (by its system stream), and the operators the window timer calls."""

    operators: list[OperatorImpl]
    inputs: dict[SystemStream, InputImpl]
    timers: list[OperatorImpl]
    compiler: ChainCompiler

    def process(self, ssps: frozenset[SystemStreamPartition], hooks: ProcessHooks) -> Process:
        """The compiled ``process`` of the task holding ``ssps`` (see :meth:`ChainCompiler.process`)."""
        by_stream = [
            (op, frozenset(ssp for ssp in ssps if ssp.system_stream == ss)) for ss, op in self.inputs.items()
        ]
        return self.compiler.process(by_stream, hooks)

    def close(self) -> None:
        """Close every operator."""
        for op in self.operators:
            op.close()


def build_task_graph(
    graph: ApplicationGraph,
    plan: ApplicationPlan,
    ssps: frozenset[SystemStreamPartition],
    runtime: OpRuntime,
) -> TaskGraph:
    """The operators of this job's stage for the task holding ``ssps``: the chains starting at the job's
    input streams (partition_by ends a chain), each operator's state restored, entries bound."""
    held = {ssp.system_stream for ssp in ssps}
    specs = _stage_specs(graph, plan)
    impls: dict[int, OperatorImpl] = {}
    for spec in specs:
        impls[id(spec)] = _make(spec, graph, plan, held, runtime)
    for spec in specs:
        seen: dict[int, int] = {}
        for downstream in spec.next:
            # A join of a stream with itself has it twice in ``prev``: each edge takes the next index.
            n = seen[id(downstream)] = seen.get(id(downstream), -1) + 1
            index = [i for i, p in enumerate(downstream.prev) if p is spec][n]
            impls[id(spec)].connect(impls[id(downstream)], index)
    operators = _upstream_first([impls[id(spec)] for spec in specs])
    for op in operators:
        op.init()
        if op.prev and all(p.ended and p.output_watermark == WATERMARK_MAX for p in op.prev):
            # Fed only by inputs this task holds no partition of: nothing will ever come through it.
            op.ended = True
            op.input_watermark = op.output_watermark = WATERMARK_MAX
    compiler = ChainCompiler(runtime)
    compiler.bind(operators)
    inputs = {op.system_stream: op for op in operators if isinstance(op, InputImpl)}
    return TaskGraph(operators, inputs, [op for op in operators if op.has_timer], compiler)


def _stage_specs(graph: ApplicationGraph, plan: ApplicationPlan) -> list[OperatorSpec]:
    """Every spec reachable from the job's input streams (not past partition_by), each once."""
    job_inputs = plan.inputs_of_job()
    unknown = sorted(job_inputs - graph.inputs.keys())
    if unknown:
        raise ConfigError(
            f"{APP_PLAN_KEY} names input stream(s) {', '.join(unknown)} that the application does not "
            f"declare (it declares {', '.join(graph.inputs) or 'none'}): was it planned for another "
            "application?",
            key=APP_PLAN_KEY,
        )
    specs: dict[int, OperatorSpec] = {}
    for stream_id, start in graph.inputs.items():
        if stream_id in job_inputs:
            for spec in graph.walk(start):
                specs.setdefault(id(spec), spec)
    for spec in specs.values():
        for up in spec.prev:
            if id(up) not in specs:
                streams = ", ".join(sorted(graph.upstream_inputs(up)))
                raise SamzaError(
                    f"operator {spec.op_id!r} reads from {up.op_id!r} (fed by {streams}), which is not in "
                    "this job's stage: its inputs must be planned into the same job"
                )
    return list(specs.values())


def _stream(plan: ApplicationPlan, stream_id: str, op_id: str) -> StreamPlan:
    stream = plan.streams.get(stream_id)
    if stream is None:
        raise ConfigError(
            f"{APP_PLAN_KEY} has no stream {stream_id!r} (used by operator {op_id!r}): was it planned for "
            "another application?",
            key=APP_PLAN_KEY,
        )
    return stream


def _make(
    spec: OperatorSpec,
    graph: ApplicationGraph,
    plan: ApplicationPlan,
    held: set[SystemStream],
    runtime: OpRuntime,
) -> OperatorImpl:
    if isinstance(spec, InputSpec):
        stream = _stream(plan, spec.stream_id, spec.op_id).system_stream
        return InputImpl(spec, runtime, stream, stream in held)
    if isinstance(spec, PartitionBySpec):
        target = _stream(plan, spec.stream_id, spec.op_id)
        upstream = {_stream(plan, s, spec.op_id).system_stream for s in graph.upstream_inputs(spec)}
        return PartitionByImpl(spec, runtime, target.system_stream, target.partitions, bool(upstream & held))
    if isinstance(spec, SendToSpec):
        return SendToImpl(spec, runtime, _stream(plan, spec.stream_id, spec.op_id).system_stream)
    if isinstance(spec, WindowSpec):
        return window_impl(spec, runtime)
    if isinstance(spec, JoinSpec):
        return JoinImpl(spec, runtime)
    simple: dict[type[Any], type[OperatorImpl]] = {
        MapSpec: MapImpl,
        FilterSpec: FilterImpl,
        FlatMapSpec: FlatMapImpl,
        MergeSpec: MergeImpl,
        SinkSpec: SinkImpl,
    }
    impl = simple.get(type(spec))
    if impl is None:
        raise SamzaError(f"operator {spec.op_id!r}: no implementation of {spec.kind.value} operators")
    return impl(spec, runtime)


def _upstream_first(ops: list[OperatorImpl]) -> list[OperatorImpl]:
    """``ops`` in an order where every operator comes after all its upstream operators."""
    order: list[OperatorImpl] = []
    done: set[int] = set()

    def visit(op: OperatorImpl) -> None:
        if id(op) in done:
            return
        done.add(id(op))
        for up in op.prev:
            visit(up)
        order.append(op)

    for op in ops:
        visit(op)
    return order


__all__ = ["TaskGraph", "build_task_graph"]
