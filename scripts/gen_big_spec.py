#!/usr/bin/env python3
"""Writes a large spec for measuring compile time and memory.

    scripts/gen_big_spec.py EVENTS [STATES] > big.tg
    /usr/bin/time -f "%e s %M KB" target/release/tracegate check big.tg --traces t.jsonl

Each event matches its own tool with a guard; transitions cycle through STATES states
(default: as many as events, the worst case for a states x events table), and every
tenth event is forbidden somewhere.
"""
import sys

events = int(sys.argv[1])
states = int(sys.argv[2]) if len(sys.argv) > 2 else events
out = [f"spec big_{events}", "initial s0", "otherwise ignore"]
for i in range(events):
    out.append(f'event e{i} = call tool_{i} where args.v == {i} and status != "error"')
for i in range(events):
    out.append(f"s{i % states} -> s{(i + 1) % states} on e{i}")
for i in range(0, events, 10):
    out.append(f'forbid s{(i + 5) % states} on e{i}: "event {i} is not allowed here"')
sys.stdout.write("\n".join(out) + "\n")
