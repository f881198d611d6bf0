"""The container: SystemConsumers, task instances, callback sequencing, the run loop and its lifecycle."""

from samza_nb.container.clock import Clock, SystemClock
from samza_nb.container.container import SamzaContainer
from samza_nb.container.loop.run_loop import RunLoop, RunLoopSettings
from samza_nb.observe.states import ContainerState  # (defined with the run outcomes; named here too)

__all__ = ["Clock", "ContainerState", "RunLoop", "RunLoopSettings", "SamzaContainer", "SystemClock"]
