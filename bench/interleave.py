#!/usr/bin/env python3
"""Runs commands in turns and prints each one's median wall time.

    interleave.py OUT.json ROUNDS WARMUP CMD...

Each round runs every command once, in order, so a machine whose speed
drifts from minute to minute (a shared VM) slows all of them alike and the
ratios between them hold; back-to-back batches of one command each do not
have that property. The times go to OUT.json as {"results": [{"command":
..., "times": [seconds...]}]}, the shape hyperfine's --export-json uses.
"""
import json
import shlex
import subprocess
import sys
import time


def main():
    out, rounds, warmup, cmds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    argvs = [shlex.split(c) for c in cmds]
    times = [[] for _ in cmds]
    for r in range(warmup + rounds):
        for i, argv in enumerate(argvs):
            start = time.perf_counter()
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            took = time.perf_counter() - start
            if p.returncode != 0:
                sys.exit(f"interleave.py: {cmds[i]!r} exited {p.returncode}")
            if r >= warmup:
                times[i].append(took)
    with open(out, "w") as f:
        json.dump({"results": [{"command": c, "times": t} for c, t in zip(cmds, times)]}, f)


if __name__ == "__main__":
    main()
