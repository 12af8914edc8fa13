#!/usr/bin/env bash
# Every test of the project, on a fresh machine: the Rust tests (unit, integration,
# doc), the Python package's tests (scripts/test-python.sh: a virtual environment with
# maturin, pytest and Ray, the package built from python/) and the HTML report's test in
# headless Chromium (scripts/test-browser.sh: Debian's chromium and the pinned
# playwright-core). Each part installs what it needs; any failure fails the run, and no
# part is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --locked
bash scripts/test-python.sh
bash scripts/test-browser.sh
