"""The extensions/ directory on sys.path, as a user would put it, so plug-ins load by dotted path."""

from __future__ import annotations

import sys
from pathlib import Path

EXTENSIONS = Path(__file__).resolve().parents[2] / "extensions"

if str(EXTENSIONS) not in sys.path:
    sys.path.insert(0, str(EXTENSIONS))
