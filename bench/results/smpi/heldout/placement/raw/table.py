#!/usr/bin/env python3
"""The before/after table of placement/README.md from the halo outputs: before in heldout/raw/ (main
944645d's numbers), after in placement/raw/ (branch wip-place). Run from the repository root:
python3 bench/results/smpi/heldout/placement/raw/table.py"""
import re
import sys

P = "bench/results/smpi/heldout"
ROWS = [  # (label, file stem)
    ("round-robin, 64, 3-D n=16 k=1", "bignode_rr_dims3n16"),
    ("round-robin, 64, 2-D n=64 k=1", "bignode_rr_dims2n64"),
    ("round-robin, 64, 2-D n=512 k=3", "bignode_rr_dims2n512halo3"),
    ("round-robin, 64, 3-D n=48 k=1", "bignode_rr_dims3n48"),
    ("none (cycled), 32, 3-D n=16 k=1", "bignode_nohf_dims3n16"),
    ("none (cycled), 32, 2-D n=512 k=3", "bignode_nohf_dims2n512halo3"),
    ("none (cycled), 32, 3-D n=48 k=1", "bignode_nohf_dims3n48"),
    ("block, 64, 3-D n=16 k=1", "bignode_block_dims3n16"),
    ("block, 64, 2-D n=512 k=3", "bignode_block_dims2n512halo3"),
    ("block, 64, 3-D n=48 k=1", "bignode_block_dims3n48"),
]
VARIANTS = ["halo API direct", "halo API dimwise", "halo API combining"]


def parse(path):
    try:
        text = open(path).read()
    except OSError:
        return None
    out = {"variants": {}}
    for line in text.splitlines():
        m = re.match(r"^(.*?\S)\s{2,}(\S+)\s+([\d.]+)\s+([\d.]+|-)\s+(\d+|-)\s+OK$", line)
        if m:
            out["variants"][m.group(1)] = (float(m.group(3)), None if m.group(4) == "-" else float(m.group(4)))
        m = re.match(r"^halo API \(the cartplan path\) chose (\S+): ([\d.]+) us, ([\d.]+) x the best variant \((.*), ([\d.]+) us\)", line)
        if m:
            out.update(pick=m.group(1), auto=float(m.group(2)), ratio=float(m.group(3)), best=float(m.group(5)))
        m = re.match(r"^halo: placement (.*)$", line)
        if m:
            out["placement"] = m.group(1)
    return out if "pick" in out else None


def cells(r):
    if r is None:
        return "not run", "-", "-"
    ratio = f"{r['auto']:.2f} / {r['best']:.2f} = **{r['ratio']:.3f}**" if r["ratio"] > 1.05 else f"{r['auto']:.2f} / {r['best']:.2f} = {r['ratio']:.3f}"
    pred = "; ".join(f"{v.split()[-1]} {r['variants'][v][0]:.2f} ({r['variants'][v][1]:.2f})" for v in VARIANTS if v in r["variants"])
    return ratio, r["pick"], pred


print("| row | before: auto / best | after: auto / best | pick before -> after | after: placement | before: measured (predicted) | after: measured (predicted) |")
print("|---|---|---|---|---|---|---|")
for label, stem in ROWS:
    b, a = parse(f"{P}/raw/halo_{stem}.txt"), parse(f"{P}/placement/raw/halo_{stem}.txt")
    rb, pb, db = cells(b)
    ra, pa, da = cells(a)
    where = a.get("placement", "-") if a else "-"
    print(f"| {label} | {rb} | {ra} | {pb} -> {pa} | {where} | {db} | {da} |")
