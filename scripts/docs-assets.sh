#!/usr/bin/env bash
# Brings the Mermaid script the documentation site draws its diagrams with (docs/_static/vendor/, git-ignored):
# dist/mermaid.min.js of the npm package `mermaid`, taken with npm (the registry's own client) at the pinned
# version and checked against its pinned SHA-256. The site then draws its diagrams with no network, from a
# web server or opened as files. Run by `make setup` (and so by `make test` and `make docs`). Safe to run twice.
set -euo pipefail
MERMAID_VERSION=11.12.1
MERMAID_SHA256=198b19442f86f0b46a17e56d3abf744c3a28a3427e66fa8dada3b589a77babcc
cd "$(dirname "$0")/.."
TARGET=docs/_static/vendor/mermaid.min.js
if [ -f "$TARGET" ] && echo "$MERMAID_SHA256  $TARGET" | sha256sum --check --status; then
    touch "$TARGET"  # (newer than this script: make is satisfied)
    exit 0
fi
if ! command -v npm >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    # As root on Debian (CI, a fresh machine): Debian's npm, as the other *-deps scripts install theirs.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
if ! command -v npm >/dev/null; then
    echo "docs-assets: npm is needed to bring mermaid@$MERMAID_VERSION for the documentation (install Node.js)" >&2
    exit 1
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
npm pack --silent --pack-destination "$WORK" "mermaid@$MERMAID_VERSION" >/dev/null
tar -xzf "$WORK/mermaid-$MERMAID_VERSION.tgz" -C "$WORK" package/dist/mermaid.min.js package/LICENSE
if ! echo "$MERMAID_SHA256  $WORK/package/dist/mermaid.min.js" | sha256sum --check --status; then
    echo "docs-assets: mermaid@$MERMAID_VERSION's dist/mermaid.min.js does not have the pinned SHA-256" >&2
    exit 1
fi
mkdir -p "$(dirname "$TARGET")"
cp "$WORK/package/LICENSE" docs/_static/vendor/mermaid.LICENSE
cp "$WORK/package/dist/mermaid.min.js" "$TARGET"
