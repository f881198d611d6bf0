"""Input and output systems: the plug-in protocols, the registry, and the built-in systems."""

from samza_nb.systems.base import SystemAdmin, SystemConsumer, SystemFactory, SystemProducer

__all__ = ["SystemAdmin", "SystemConsumer", "SystemFactory", "SystemProducer"]
