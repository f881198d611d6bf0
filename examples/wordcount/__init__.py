"""Word count over a text file: ``samza-nb run --config-path examples/wordcount/job.properties``."""
