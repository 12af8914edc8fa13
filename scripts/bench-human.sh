#!/usr/bin/env bash
# Times `tracegate check` with human output against JSON output on the same
# 10^6-record trace, best of 3 runs each, side by side.
#
#     scripts/bench-human.sh [RECORDS] [EVERY]
#
# The trace is the workload of benches/throughput.rs (interleaved keys working through
# create → created → note → noted), except that one operation in EVERY (default 8) gets
# an unknown outcome and is then blindly re-created: a `forbidden-transition` each, so
# that the report has tens of thousands of findings to render. Uses the release build
# (built here if missing) and writes its files under a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

records="${1:-1000000}"
every="${2:-8}"
bin="${TRACEGATE:-$PWD/target/release/tracegate}"
[ -x "$bin" ] || cargo build --locked --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat > "$work/bench.tg" <<'SPEC'
spec bench_reconcile
about "The reconcile protocol, one instance per request id."
per args.request_id
event create  = call create_record
event created = result create_record where status == "ok"
event unknown = result create_record where status == "error" and error.category == "outcome_unknown"
event lookup  = call lookup_by_request_id
event found   = result lookup_by_request_id where status == "ok" and has output.id
event note    = call attach_note
event noted   = result attach_note where status == "ok"
initial idle
accept idle, done
idle     -> pending  on create
pending  -> done     on created
pending  -> unknown  on unknown
unknown  -> checking on lookup
checking -> done     on found
done     -> done     on note, noted
done     -> pending  on create
forbid unknown on create: "blind re-create"
SPEC

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

best() {
    local fastest=""
    for _ in 1 2 3; do
        local start end took
        start=$(date +%s.%N)
        "$bin" check "$work/bench.tg" --traces "$work/trace.jsonl" --color never "$@" > /dev/null || [ $? -eq 1 ]
        end=$(date +%s.%N)
        took=$(echo "$end - $start" | bc)
        if [ -z "$fastest" ] || [ "$(echo "$took < $fastest" | bc)" -eq 1 ]; then
            fastest=$took
        fi
    done
    echo "$fastest"
}

lines=$(wc -l < "$work/trace.jsonl")
findings=$("$bin" check "$work/bench.tg" --traces "$work/trace.jsonl" --output json | tail -1 || true)
json=$(best --output json)
human=$(best --output human)
echo "trace: $lines records; summary: $findings"
printf 'json  %6.3f s\nhuman %6.3f s\nratio %6.3f (human / json, best of 3 each)\n' \
    "$json" "$human" "$(echo "scale=4; $human / $json" | bc)"
