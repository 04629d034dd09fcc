#!/usr/bin/env python3
"""Median over rounds of one client's CPU per response over another's.

Usage: ratios.py RESULTS "A|B" ...
RESULTS holds lines "round<TAB>client<TAB>µs per response"; each "A|B" names
two clients. A pair with a client that has no figure is left out.
"""
import collections
import statistics
import sys

cost = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    k, name, us = line.rstrip("\n").split("\t")
    cost[name][k] = float(us)
print("median over the rounds of the ratio of CPU per response (< 1: the first is cheaper)")
for pair in sys.argv[2:]:
    a, b = pair.split("|")
    x, y = cost.get(a), cost.get(b)
    if not x or not y:
        continue
    r = [x[k] / y[k] for k in x if k in y]
    if r:
        print(f"  {a} / {b}: {statistics.median(r):.3f}  (rounds: {', '.join(f'{v:.3f}' for v in r)})")
