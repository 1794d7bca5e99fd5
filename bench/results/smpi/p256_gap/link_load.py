#!/usr/bin/env python3
"""Per-link bytes of one 2-D 9-point periodic halo exchange on a torus platform of bench/smpi/platforms.py
(block placement, row-major grid sqrt(p) x sqrt(p)); node-to-node flows routed on a shortest router path (BFS, ties
broken by discovery order: SimGrid's Floyd may pick another path of equal length). Prints the 8 busiest links.
    python3 link_load.py torus_p256.xml NP RANKS_PER_NODE N K"""
import re, sys, collections
xml, np_, cores, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
txt = open(xml).read()
bw = {m[0]: float(m[1]) for m in re.findall(r'<link id="([^"]+)" bandwidth="([0-9.e+]+)Bps"', txt)}
adj = collections.defaultdict(list); hostr = {}
for s, d, l in re.findall(r'<route src="([^"]+)" dst="([^"]+)"><link_ctn id="([^"]+)"', txt):
    if s.startswith('n'): hostr[s] = (d, l)
    else: adj[s].append((d, l, 'UP')); adj[d].append((s, l, 'DOWN'))
def path(a, b):
    prev = {a: None}; q = [a]
    for u in q:
        for v, l, dr in adj[u]:
            if v not in prev: prev[v] = (u, l, dr); q.append(v)
    out = []; v = b
    while prev[v]: u, l, dr = prev[v]; out.append((l, dr)); v = u
    return out[::-1]
import math
P = int(math.isqrt(np_)); dims = (P, P)
face, corner = n * k * 8, k * k * 8
load = collections.Counter(); nicout = collections.Counter()
for r in range(np_):
    x, y = divmod(r, P)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if dx == dy == 0: continue
            q = ((x + dx) % P) * P + (y + dy) % P
            a, b = f"n{r // cores}", f"n{q // cores}"
            if a == b: continue
            bytes_ = corner if dx and dy else face
            ra, la = hostr[a]; rb, lb = hostr[b]
            load[(la, 'UP')] += bytes_; load[(lb, 'DOWN')] += bytes_
            if ra != rb:
                for e in path(ra, rb): load[e] += bytes_
for (l, dr), b in sorted(load.items(), key=lambda kv: -kv[1] / bw[kv[0][0]])[:8]:
    print(f"{l:12} {dr:4} {b:8d} B  {b / bw[l] * 1e6:7.2f} us at {bw[l]/1e9:g} GB/s")
