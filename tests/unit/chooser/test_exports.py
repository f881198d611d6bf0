"""The public names of samza_nb.chooser, a promise to users."""

from __future__ import annotations

import samza_nb.chooser as chooser_pkg
from samza_nb.api.metadata import SSPMetadata


def test_design_names_are_exported() -> None:
    required = {
        "MessageChooser",
        "RoundRobinChooser",
        "BatchingChooser",
        "TieredPriorityChooser",
        "BootstrappingChooser",
        "SSPMetadata",
        "TimeAlignedChooser",
        "DefaultChooser",
        "integer_offset_comparator",
    }
    assert required <= set(chooser_pkg.__all__)
    for name in chooser_pkg.__all__:
        assert getattr(chooser_pkg, name) is not None
    assert len(chooser_pkg.__all__) == len(set(chooser_pkg.__all__))


def test_ssp_metadata_is_the_api_type() -> None:
    assert chooser_pkg.SSPMetadata is SSPMetadata


def test_integer_offset_comparator() -> None:
    compare = chooser_pkg.integer_offset_comparator
    assert compare("2", "10") < 0
    assert compare("10", "2") > 0
    assert compare("7", "7") == 0
