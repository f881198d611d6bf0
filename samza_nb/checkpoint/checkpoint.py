"""The Checkpoint value, re-exported from :mod:`samza_nb.api.checkpoint` where it lives (so that storage can
use it without depending on the checkpoint managers)."""

from __future__ import annotations

from samza_nb.api.checkpoint import Checkpoint

__all__ = ["Checkpoint"]
