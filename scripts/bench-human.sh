#!/usr/bin/env bash
# Times `tracegate check` with human output against JSON output on the same
# 10^6-record trace, best of 3 runs each, side by side.
#
#     scripts/bench-human.sh [RECORDS] [EVERY]
#
# The trace is the workload of benches/throughput.rs (interleaved keys working through
# create → created → note → noted), except that one operation in EVERY (default 8) gets
# an unknown outcome and is then blindly re-created: a `forbidden-transition` each, so
# that the report has tens of thousands of findings to render (32,250 at 10^6 records).
# Uses the release build (built here if missing; TRACEGATE names another binary) and
# writes its files under a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

records="${1:-1000000}"
every="${2:-8}"
bin="${TRACEGATE:-$PWD/target/release/tracegate}"
[ -x "$bin" ] || cargo build --locked --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT


python3 - "$records" "$every" > "$work/trace.jsonl" <<'PY'
import sys

records, every = int(sys.argv[1]), int(sys.argv[2])
lanes = 1000
ok = ["create", "created", "note", "noted"]
bad = ["create", "unknown", "create"]
out = sys.stdout
step, operation, key = [0] * lanes, [0] * lanes, list(range(lanes))
call, written, open_call = 0, 0, [0] * lanes
while written < records or any(step):
    for lane in range(lanes):
        if written >= records and step[lane] == 0:
            continue
        k, op = key[lane], operation[lane]
        script = bad if (k + op) % every == 0 else ok
        # A blind re-create uses a key of its own, so each is one finding.
        rid = f"req-{k}-x{op}" if script is bad else f"req-{k}"
        what, answer = script[step[lane]], open_call[lane]
        if what in ("create", "note"):
            open_call[lane] = call
            call += 1
        if what == "create":
            out.write(f'{{"kind":"call","tool":"create_record","call_id":"c{call - 1}","args":{{"request_id":"{rid}","title":"Invoice {k}","amount":{100 + k % 900}}}}}\n')
        elif what == "created":
            out.write(f'{{"kind":"result","tool":"create_record","call_id":"c{answer}","status":"ok","output":{{"id":"rec_{k}","created":true}}}}\n')
        elif what == "unknown":
            out.write(f'{{"kind":"result","tool":"create_record","call_id":"c{answer}","status":"error","error":{{"category":"outcome_unknown","message":"timeout after dispatch"}}}}\n')
        elif what == "note":
            out.write(f'{{"kind":"call","tool":"attach_note","call_id":"c{call - 1}","args":{{"request_id":"{rid}","note":"reconciled"}}}}\n')
        else:
            out.write(f'{{"kind":"result","tool":"attach_note","call_id":"c{answer}","status":"ok","output":null}}\n')
        written += 1
        step[lane] += 1
        if step[lane] == len(script):
            step[lane] = 0
            operation[lane] += 1
PY

# Best of 3: the least wall-clock time and the least CPU time (user + system), each in
# seconds. CPU time is the steadier figure on a machine shared with other work.
best() {
    local wall="" cpu=""
    for _ in 1 2 3; do
        /usr/bin/time -f "%e %U %S" -o "$work/time" \
            "$bin" check benches/reconcile.tg --traces "$work/trace.jsonl" --color never "$@" > /dev/null || true
        # The last line: a failing status (1, the violations) is reported above it.
        read -r e u s < <(tail -n 1 "$work/time")
        local c
        c=$(echo "$u + $s" | bc)
        if [ -z "$wall" ] || [ "$(echo "$e < $wall" | bc)" -eq 1 ]; then wall=$e; fi
        if [ -z "$cpu" ] || [ "$(echo "$c < $cpu" | bc)" -eq 1 ]; then cpu=$c; fi
    done
    echo "$wall $cpu"
}

lines=$(wc -l < "$work/trace.jsonl")
findings=$("$bin" check benches/reconcile.tg --traces "$work/trace.jsonl" --output json | tail -1 || true)
read -r json_wall json_cpu <<< "$(best --output json)"
read -r human_wall human_cpu <<< "$(best --output human)"
echo "trace: $lines records; summary: $findings"
printf '        wall s   cpu s   (best of 3 each)\n'
printf 'json   %7.3f %7.3f\n' "$json_wall" "$json_cpu"
printf 'human  %7.3f %7.3f\n' "$human_wall" "$human_cpu"
printf 'ratio  %7.3f %7.3f  (human / json)\n' \
    "$(echo "scale=4; $human_wall / $json_wall" | bc)" "$(echo "scale=4; $human_cpu / $json_cpu" | bc)"
