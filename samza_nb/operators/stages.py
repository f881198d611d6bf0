"""Stages: an application's graph cut at its intermediate streams.

Operators linked by ``prev``/``next`` belong together; a ``partition_by`` and the input spec of its
intermediate stream are not linked, so cutting there leaves connected groups of operators. Each group reads
some input streams (sources and intermediates); a group whose partition_by feeds another group's
intermediate input is upstream of it. Groups that depend on each other both ways (a stream joined with its
own repartitioned self further down) cannot run apart and form one stage. Stages are ordered upstream
first, ties by the order the operators were declared, so the same application always gets the same stage
numbers (they name the jobs of a split application).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass

from samza_nb.operators.graph import ApplicationGraph, InputSpec


@dataclass(frozen=True)
class Stages:
    """``inputs[i]``: the stream ids stage ``i`` reads, in declaration order (upstream stages first);
    ``of_op``: op id -> its stage."""

    inputs: tuple[tuple[str, ...], ...]
    of_op: Mapping[str, int]


def cut_stages(graph: ApplicationGraph) -> Stages:
    """The stages of ``graph`` (see the module)."""
    operators = graph.operators
    index = {id(op): i for i, op in enumerate(operators)}
    parent = list(range(len(operators)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for op in operators:
        for up in op.prev:
            a, b = find(index[id(op)]), find(index[id(up)])
            if a != b:
                parent[max(a, b)] = min(a, b)  # a root is the first-declared operator of its group
    roots = sorted({find(i) for i in range(len(operators))})
    group_of_root = {root: n for n, root in enumerate(roots)}
    group = [group_of_root[find(i)] for i in range(len(operators))]

    edges: dict[int, set[int]] = {n: set() for n in range(len(roots))}
    for spec in graph.intermediate_inputs():
        if spec.source is not None:
            edges[group[index[id(spec.source)]]].add(group[index[id(spec)]])
    merged = _merge_cycles(edges)
    order = _upstream_first(merged, edges)
    stage_of_group = {g: order.index(merged[g]) for g in edges}

    inputs: list[list[str]] = [[] for _ in order]
    of_op: dict[str, int] = {}
    for i, op in enumerate(operators):
        stage = stage_of_group[group[i]]
        of_op[op.op_id] = stage
        if isinstance(op, InputSpec):
            inputs[stage].append(op.stream_id)
    return Stages(tuple(tuple(ids) for ids in inputs), of_op)


def _reachable(edges: Mapping[int, set[int]], start: int) -> set[int]:
    seen: set[int] = set()
    stack = [start]
    while stack:
        node = stack.pop()
        for nxt in edges[node]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _merge_cycles(edges: Mapping[int, set[int]]) -> dict[int, int]:
    """Group -> the representative (smallest group) of the groups it depends on both ways."""
    reach = {g: _reachable(edges, g) for g in edges}
    return {g: min({g} | {h for h in reach[g] if g in reach[h]}) for g in edges}


def _upstream_first(merged: Mapping[int, int], edges: Mapping[int, set[int]]) -> list[int]:
    """The representatives in an order where every stage comes after the stages feeding it (ties: the
    earlier declared first)."""
    nodes = sorted(set(merged.values()))
    successors: dict[int, set[int]] = {n: set() for n in nodes}
    for g, targets in edges.items():
        for t in targets:
            if merged[g] != merged[t]:
                successors[merged[g]].add(merged[t])
    waiting = {n: 0 for n in nodes}
    for targets in successors.values():
        for t in targets:
            waiting[t] += 1
    ready = [n for n in nodes if waiting[n] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for t in successors[node]:
            waiting[t] -= 1
            if waiting[t] == 0:
                heapq.heappush(ready, t)
    return order


__all__ = ["Stages", "cut_stages"]
