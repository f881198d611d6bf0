"""A Spark system's inputs: bounded DataFrames written once and read with pyarrow (materialize, manifest,
reader), and streaming ones fed into the durable log (feed, fed, fed_log, streaming). Internal."""
