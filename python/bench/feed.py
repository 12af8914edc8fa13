"""What `Monitor.feed` costs from Python, per record, for a typical spec.

Feeds a long conversation that follows specs/reconcile_before_retry.tg (creates that
time out, lookups that find the record, notes, messages: calls with arguments and
results with nested outputs and errors) and prints the time per record of `feed`, and
of `allows`, as the best of several runs. The records are built before timing starts,
as an agent has them in hand.

    python python/bench/feed.py [--records N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import tracegate

SPEC = Path(__file__).resolve().parents[2] / "specs" / "reconcile_before_retry.tg"


def conversation(rounds: int) -> list[dict]:
    records: list[dict] = []
    for i in range(rounds):
        request_id = f"req_{i:06}"
        create, lookup, note = f"c{i}", f"l{i}", f"n{i}"
        records += [
            {"kind": "message", "role": "user", "text": f"open record {i}"},
            {"kind": "call", "tool": "create_record", "call_id": create,
             "args": {"request_id": request_id, "title": "Expired TLS certificate", "priority": "urgent"}},
            {"kind": "result", "tool": "create_record", "call_id": create, "status": "error",
             "error": {"status": 504, "category": "outcome_unknown", "code": "timeout",
                       "message": "upstream timed out after the request was dispatched"}},
            {"kind": "call", "tool": "lookup_by_request_id", "call_id": lookup,
             "args": {"request_id": request_id}},
            {"kind": "result", "tool": "lookup_by_request_id", "call_id": lookup, "status": "ok",
             "output": {"id": f"rec_{i}", "created_at": "2024-11-07T11:05:40Z"}},
            {"kind": "call", "tool": "attach_note", "call_id": note,
             "args": {"record": f"rec_{i}", "text": "created after a timeout"}},
            {"kind": "result", "tool": "attach_note", "call_id": note, "status": "ok", "output": {}},
        ]
    return records


def best(run, records: list[dict], repeat: int) -> float:
    """Seconds per record, the best of `repeat` runs on a fresh monitor."""
    times = []
    for _ in range(repeat):
        monitor = tracegate.Monitor(SPEC)
        start = time.perf_counter()
        run(monitor, records)
        times.append((time.perf_counter() - start) / len(records))
        if run is feed_all:
            assert monitor.finish() == [], "the conversation follows the spec"
    return min(times)


def feed_all(monitor: tracegate.Monitor, records: list[dict]) -> None:
    feed = monitor.feed
    for record in records:
        if feed(record):
            raise AssertionError("the conversation follows the spec")


def allows_all(monitor: tracegate.Monitor, records: list[dict]) -> None:
    allows = monitor.allows
    for record in records:
        allows(record)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=140_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    records = conversation(max(1, args.records // 7))
    feed = best(feed_all, records, args.repeat)
    allows = best(allows_all, records, args.repeat)
    print(f"spec: {SPEC.name}, {len(records)} records, best of {args.repeat}")
    print(f"feed:   {feed * 1e6:.2f} µs/record ({1 / feed:,.0f} records/s)")
    print(f"allows: {allows * 1e6:.2f} µs/record")


if __name__ == "__main__":
    main()
