"""The in-memory system: partitioned streams in this process. The embedded default and the test double.

``systems.<s>.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory``.
"""

from samza_nb.systems.inmemory.broker import InMemoryBroker
from samza_nb.systems.inmemory.system import InMemorySystemFactory

__all__ = ["InMemoryBroker", "InMemorySystemFactory"]
