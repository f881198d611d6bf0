"""The Kafka unit tests need aiokafka (the kafka extra). Without it only ``test_extra.py`` is collected: it
skips saying why, or, under ``CI=true``, fails (tests.requirements.require)."""

from __future__ import annotations

import importlib
from pathlib import Path

try:
    importlib.import_module("aiokafka")
except ImportError:
    collect_ignore = [p.name for p in Path(__file__).parent.glob("test_*.py") if p.name != "test_extra.py"]
