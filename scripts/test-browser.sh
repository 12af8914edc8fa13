#!/usr/bin/env bash
# Opens the HTML report in real headless Chromium and checks it (tests/browser/).
# Installs what it needs: Debian's chromium package and the test's npm dependencies
# (pinned by tests/browser/package-lock.json). Fails, never skips, if anything is
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "test-browser: chromium is not installed and this is not root: apt-get install -y chromium" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
for tool in node npm cargo; do
    command -v "$tool" >/dev/null || { echo "test-browser: $tool is missing" >&2; exit 1; }
done

cargo build --locked --quiet
(cd tests/browser && npm ci --no-audit --no-fund --silent)

TRACEGATE="$PWD/target/debug/tracegate" CHROMIUM="$(command -v chromium)" \
    node --test tests/browser/report.test.mjs
