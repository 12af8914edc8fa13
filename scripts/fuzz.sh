#!/usr/bin/env bash
# Runs every fuzz target under fuzz/ for a short while: scripts/fuzz.sh [SECONDS]
# (default 60 per target).
#
# cargo-fuzz needs nightly compiler features (sanitizers, -Z flags); RUSTC_BOOTSTRAP=1
# lets the stable toolchain use them, so no nightly toolchain is needed. cargo-fuzz is
# installed from crates.io if it is missing. Each target's corpus lives in
# fuzz/corpus/<target>/ (not committed) and is seeded from specs/, traces/ and
# tests/fixtures/; a crash leaves its input in fuzz/artifacts/<target>/, which
# `cargo fuzz run <target> <file>` replays. Turn each one into a regression test.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

seed() {
    local target="$1"
    shift
    mkdir -p "corpus/$target"
    find "$@" -type f -size -1000k 2>/dev/null | while read -r file; do
        cp "$file" "corpus/$target/seed-$(printf '%s' "$file" | cksum | cut -d' ' -f1)"
    done
}
seed spec "$root/specs" "$root/tests/fixtures" -name '*.tg'
seed trace_input "$root/traces" "$root/tests/fixtures" -name '*.json*'
seed convert "$root/traces" "$root/tests/fixtures" -name '*.json*'
seed stream_whole "$root/traces" "$root/tests/fixtures" -name '*.json*'
seed chain "$root/traces" "$root/tests/fixtures" -name '*.jsonl'
seed check "$root/traces" "$root/tests/fixtures" -name '*.json*'
# The trace_input and stream_whole targets read their first byte as the format to
# force: 0 detects.
for file in corpus/trace_input/seed-* corpus/stream_whole/seed-*; do
    [ -e "$file" ] || continue
    if [ "$(head -c1 "$file" | od -An -tu1 | tr -d ' ')" != 0 ]; then
        { printf '\0'; cat "$file"; } >"$file.tmp" && mv "$file.tmp" "$file"
    fi
done

# The check target reads two bytes first: 13 checks against every shipped spec with no
# `--trace-by`, and 0 detects the format.
for file in corpus/check/seed-*; do
    [ -e "$file" ] || continue
    if [ "$(head -c1 "$file" | od -An -tu1 | tr -d ' ')" != 13 ]; then
        { printf '\r\0'; cat "$file"; } >"$file.tmp" && mv "$file.tmp" "$file"
    fi
done

for target in spec trace_input stream_whole convert chain check; do
    echo "== $target: $seconds s"
    # `chain` seals and verifies through the batch pipeline, which starts a thread per
    # call for a log of more than one batch. A thread's thread-local storage (the
    # standard channels' wait context) is freed by its destructors after the scope has
    # joined it, so LeakSanitizer, checking between two inputs, now and then sees a
    # thread still exiting as a leak that replaying the input never shows; the main thread's own wait context, made when it waits on a
    # channel, is freed only after the sanitizer's check at exit. Leak checking is off
    # for that target only: between inputs (libFuzzer's flag) and at exit (the
    # sanitizer's option).
    leaks=()
    # Every target but `spec` reads JSON: its dictionary puts edge values (`1e400`,
    # `"\ud800"`, serde_json's private tokens) and the formats' names in reach.
    dict=()
    if [ "$target" != spec ]; then
        dict=(-dict=json.dict)
    fi
    asan="${ASAN_OPTIONS:-}"
    if [ "$target" = chain ]; then
        leaks=(-detect_leaks=0)
        asan="${asan:+$asan:}detect_leaks=0"
    fi
    ASAN_OPTIONS="$asan" cargo fuzz run "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 "${dict[@]}" "${leaks[@]}"
done
