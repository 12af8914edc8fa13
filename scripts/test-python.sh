#!/usr/bin/env bash
# Tests the Python package: builds the CLI (the tests compare against it), installs
# maturin, pytest and Ray into a virtual environment under target/, installs the
# package from python/ into it, and runs the pytest suite. Exits non-zero on any
# failure, including a run that collects no test (pytest's exit status 5).
#
# Everything is built with the dev profile in the root's target directory, so the
# dependencies `cargo test` compiled are reused (the benchmark, python/bench/feed.py,
# wants a release build: `pip install ./python`). PYTHON picks the interpreter
# (default: python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv="$root/target/python-venv"
export CARGO_TARGET_DIR="$root/target"

start=$SECONDS
# The extension crate is outside the root package: hold it to the same standards.
cargo fmt --check --manifest-path python/Cargo.toml
cargo clippy --locked --quiet --manifest-path python/Cargo.toml -- -D warnings
cargo build --locked --quiet
export TRACEGATE_BIN="$root/target/debug/tracegate"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
# The build backend runs the `maturin` executable: the environment's comes first.
export PATH="$venv/bin:$PATH"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.7,<2" "pytest>=7" "ray[data]>=2.9"
# --no-build-isolation: maturin is already in the environment, no second download.
MATURIN_PEP517_ARGS="--profile dev" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps ./python

status=0
"$venv/bin/python" -m pytest -q python/tests "$@" || status=$?
echo "python tests took $((SECONDS - start)) s"
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no test" >&2
    exit 1
fi
exit "$status"
