"""A Spark system's outputs: the parquet sink, its commit records (exactly-once files) and its column types.
Internal; users read outputs with :func:`samza_nb.systems.spark.read_output`."""
