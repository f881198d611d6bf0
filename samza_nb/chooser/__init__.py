"""Message choosers: which input partition's envelope the container processes next.

The rules they keep are in docs/architecture.md §4.
"""

from samza_nb.api.metadata import SSPMetadata
from samza_nb.chooser.base import MessageChooser, OffsetComparator, integer_offset_comparator
from samza_nb.chooser.batching import BatchingChooser
from samza_nb.chooser.bootstrapping import BootstrappingChooser
from samza_nb.chooser.default import DefaultChooser
from samza_nb.chooser.factory import ChooserFactory, create_chooser, load_chooser_factory
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.settings import ChooserSettings, read_chooser_settings
from samza_nb.chooser.tiered_priority import TieredPriorityChooser
from samza_nb.chooser.time_aligned import TimeAlignedChooser
from samza_nb.chooser.trace import ChoiceTrace, TracingChooser

__all__ = [
    "BatchingChooser",
    "BootstrappingChooser",
    "ChoiceTrace",
    "ChooserFactory",
    "ChooserSettings",
    "DefaultChooser",
    "MessageChooser",
    "OffsetComparator",
    "RoundRobinChooser",
    "SSPMetadata",
    "TieredPriorityChooser",
    "TimeAlignedChooser",
    "TracingChooser",
    "create_chooser",
    "integer_offset_comparator",
    "load_chooser_factory",
    "read_chooser_settings",
]
