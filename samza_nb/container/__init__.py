"""The container: it assembles a job's tasks, systems, chooser, checkpoints and stores around the run loop
(:mod:`samza_nb.container.loop`, internal) and runs it. Exported: the container, its states and its clock."""

from samza_nb.container.clock import Clock, SystemClock
from samza_nb.container.container import ContainerState, SamzaContainer

__all__ = ["Clock", "ContainerState", "SamzaContainer", "SystemClock"]
