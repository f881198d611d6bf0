#!/usr/bin/env bash
# Installs what the Spark tests need beyond the spark extra: a Java runtime for PySpark (Debian's
# openjdk-17-jre-headless). pyspark itself comes with `make test` (the spark extra). CI runs as root;
# locally, run it with sudo or install Java yourself. Safe to run twice.
set -euo pipefail
if command -v java >/dev/null 2>&1; then
    echo "spark-test-deps: $(java -version 2>&1 | head -1)"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
java -version
