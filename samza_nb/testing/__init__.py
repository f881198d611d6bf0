"""Public test helpers: TestRunner (run a task or a StreamApplication over bounded in-memory inputs),
Message, Watermark, FakeClock, and the loop modes (LoopMode, LOOP_MODES) to run a test in each way the run
loop executes a task."""

from samza_nb.testing.clock import FakeClock
from samza_nb.testing.modes import LOOP_MODES, LoopMode
from samza_nb.testing.runner import Message, TestResult, TestRunner, Watermark

__all__ = ["LOOP_MODES", "FakeClock", "LoopMode", "Message", "TestResult", "TestRunner", "Watermark"]
