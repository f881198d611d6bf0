"""Public test helpers: TestRunner (run a task or a StreamApplication over bounded in-memory inputs),
Message, Watermark, FakeClock."""

from samza_nb.testing.clock import FakeClock
from samza_nb.testing.runner import Message, TestResult, TestRunner, Watermark

__all__ = ["FakeClock", "Message", "TestResult", "TestRunner", "Watermark"]
