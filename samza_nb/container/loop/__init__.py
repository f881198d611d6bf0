"""The run loop proper: Samza's event loop (rules in docs/architecture.md §3), the message pump and its
rounds, task instances and their operations, callbacks and their low watermark, coordinator requests and the
collector. The rest of ``samza_nb.container`` assembles a container around it."""
