"""A notebook job's runs: one container on its own thread, several container processes, or a Spark job;
what ``%samza_run`` prepares, and how a failure is told."""
