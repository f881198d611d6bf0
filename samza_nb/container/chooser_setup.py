"""Building the container's MessageChooser from config (``task.chooser.class`` or the default layering)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from samza_nb.chooser.base import integer_offset_comparator
from samza_nb.chooser.batching import BatchingChooser
from samza_nb.chooser.default import DefaultChooser
from samza_nb.chooser.factory import create_chooser
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.trace import TracingChooser

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser, OffsetComparator
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin


def build_chooser(
    config: Config,
    metadata: Mapping[SystemStreamPartition, SSPMetadata],
    inputs: Sequence[SystemStream],
    admins: Mapping[str, SystemAdmin],
    trace: bool = False,
) -> MessageChooser:
    """The chooser the config asks for, given the inputs' partition metadata (bootstrap needs each
    partition's newest and upcoming offsets). With ``trace`` every choice can be explained
    (``last_choice``); without it the chooser costs what its layers cost and no more."""
    chooser = create_chooser(config, metadata, inputs, _comparator(inputs, admins))
    if trace:
        if isinstance(chooser, DefaultChooser):
            chooser.trace_enabled = True
            return chooser
        return TracingChooser(chooser)
    if isinstance(chooser, DefaultChooser) and (
        type(chooser.composed) is RoundRobinChooser or isinstance(chooser.composed, BatchingChooser)
    ):
        # Untraced, the default chooser is its outermost layer; hand that out itself, so the container
        # can use its fast paths (round robin's ``take``, batching's ``choose_run``).
        return chooser.composed
    return chooser


def _comparator(inputs: Sequence[SystemStream], admins: Mapping[str, SystemAdmin]) -> OffsetComparator:
    """One offset order for the chooser: the inputs' system's, when they share one."""
    systems = {stream.system for stream in inputs}
    if len(systems) == 1:
        admin = admins.get(next(iter(systems)))
        if admin is not None:
            return admin.offset_comparator
    return integer_offset_comparator
