"""Public test helpers: TestRunner (run a task over bounded in-memory inputs), Message, FakeClock."""

from samza_nb.testing.clock import FakeClock
from samza_nb.testing.runner import Message, TestResult, TestRunner

__all__ = ["FakeClock", "Message", "TestResult", "TestRunner"]
