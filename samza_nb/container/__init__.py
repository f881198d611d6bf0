"""The container: it assembles a job's tasks, systems, chooser, checkpoints and stores around the run loop
(:mod:`samza_nb.container.loop`, internal) and runs it. Exported: the container, its states and its clock."""

from samza_nb.container.clock import Clock, SystemClock
from samza_nb.container.container import SamzaContainer
from samza_nb.observe.states import ContainerState  # (defined with the run outcomes; named here too)

__all__ = ["Clock", "ContainerState", "SamzaContainer", "SystemClock"]
