"""The ``samza-nb`` command line (also ``python -m samza_nb``): one module per subcommand, and what they
share on the console."""

from samza_nb.runtime.cli.main import main

__all__ = ["main"]
