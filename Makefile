# The two commands of the README: `make run` (the main job) and `make test` (the whole test suite).
# Both set up .venv from pyproject.toml first; nothing needs to be installed by hand.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.samza_nb-installed
# The Spark driver's class archive (samza-nb spark-class-archive; a quicker launch of --runner spark). A
# failure to build it only costs launch time: the runner starts without it.
SPARK_ARCHIVE := $(VENV)/.spark-class-archive
# The Mermaid script the documentation site draws its diagrams with, offline (scripts/docs-assets.sh).
MERMAID_JS := docs/_static/vendor/mermaid.min.js

.PHONY: run run-spark test docs lint bench bench-spark-launch bench-peers setup fuzz-nightly reliability

setup: $(STAMP) $(MERMAID_JS) $(SPARK_ARCHIVE)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --upgrade pip
	$(BIN)/python -m pip install -qq -e '.[dev,docs,notebook,kafka,spark]'
	touch $(STAMP)

$(SPARK_ARCHIVE): $(STAMP)
	$(BIN)/samza-nb spark-class-archive || echo "samza-nb spark-class-archive failed: Spark runs launch without it"
	touch $(SPARK_ARCHIVE)

$(MERMAID_JS): scripts/docs-assets.sh
	bash scripts/docs-assets.sh

run: $(STAMP)
	$(BIN)/samza-nb run --config-path examples/wordcount/job.properties

# The clickstream pipeline on Spark (examples/clickstream): Spark plans the clicks, two containers run as
# the tasks of one Spark job on local[2], Spark SQL summarises the sessions.
run-spark: $(STAMP)
	$(BIN)/python -m examples.clickstream.pipeline

# compileall first: the many processes the suite starts (containers, kernels, Spark's workers) then load
# bytecode instead of compiling every module again (it matters where PYTHONDONTWRITEBYTECODE is set).
test: $(STAMP) $(MERMAID_JS) $(SPARK_ARCHIVE)
	$(BIN)/ruff check samza_nb tests benchmarks examples extensions scripts
	$(BIN)/mypy
	$(BIN)/python -m compileall -q -j 0 samza_nb tests examples extensions > /dev/null
	$(BIN)/python -m pytest
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/
	$(MAKE) docs

# The documentation site (docs/, Sphinx with MyST-NB), warnings as errors, into docs/_build/html. The
# notebooks are shown with their stored outputs, never executed here (nb_execution_mode = "off").
docs: $(STAMP) $(MERMAID_JS)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python benchmarks/core.py
	$(BIN)/python benchmarks/choosers.py
	$(BIN)/python benchmarks/state.py
	$(BIN)/python benchmarks/instructions.py
	$(BIN)/python benchmarks/dashboard.py
	$(BIN)/python benchmarks/log.py
	$(BIN)/python benchmarks/operators.py
	$(BIN)/python benchmarks/spark.py
	$(BIN)/python benchmarks/kafka.py
	$(BIN)/python benchmarks/kafka_passthrough.py

# The Spark runner's launch (local[2], then the 2-worker standalone cluster harness) and 2 workers against 1
# on the harness (long: several JVMs; root for the harness' mount namespaces; kept out of bench and CI).
bench-spark-launch: $(STAMP)
	$(BIN)/python benchmarks/spark_launch.py
	$(BIN)/python benchmarks/spark_launch.py --master cluster
	$(BIN)/python benchmarks/spark_cluster_scaling.py

# samza_nb beside Bytewax, streamz and Quix Streams (benchmarks/peers; a long run, ~15 min): the peers and
# samza_nb (editable, with its Kafka extra) go into a venv of their own, .venv-peers, never into .venv.
# Each peer is pinned to the version tested; confluent-kafka to the one Quix Streams 3.28 accepts (<2.13).
# Writes docs/performance-peers.md and prints it.
PEERS_VENV ?= .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.peers-installed
PEERS = bytewax[kafka]==0.21.1 streamz==0.6.6 tornado==6.6.1 quixstreams==3.28.1 confluent-kafka==2.12.2

$(PEERS_STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install -qq --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install -qq -e '.[kafka]' $(PEERS)
	touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)
	$(PEERS_VENV)/bin/python benchmarks/peers/run.py

# The fuzz properties of tests/fuzz with the nightly budget (20000 random examples each, or
# FUZZ_EXAMPLES=n); `make test` runs the same properties on a small fixed set of examples.
FUZZ_EXAMPLES ?= 20000
fuzz-nightly: $(STAMP)
	SAMZA_NB_FUZZ=nightly SAMZA_NB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest tests/fuzz -q --timeout=3600 --hypothesis-show-statistics

# The reliability table: every crash point 3 times in a row, the file faults, the fuzz properties (the CI
# budget), the Kafka faults and the soak (SOAK_MESSAGES), then the table, printed and written into
# docs/figures/reliability.md between its markers. Exit status 0 only when all of it passed.
SOAK_MESSAGES ?= 5000000
reliability: $(STAMP)
	$(BIN)/python scripts/reliability.py --runs 3 --soak-messages $(SOAK_MESSAGES) --page docs/figures/reliability.md
