#!/usr/bin/env bash
# Installs what the notebook browser test needs: Debian's chromium (driven by Playwright through
# executable_path; Playwright's own browser download is not used). CI runs as root; locally, run it with
# sudo or install chromium yourself. Safe to run twice.
set -euo pipefail
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
    echo "browser-test-deps: $CHROMIUM is present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
"$CHROMIUM" --version
