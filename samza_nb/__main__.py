"""``python -m samza_nb``: the ``samza-nb`` command line."""

from samza_nb.runtime.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
