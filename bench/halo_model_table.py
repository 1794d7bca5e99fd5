#!/usr/bin/env python3
"""Model predictions (not measurements) of the halo candidates for 2-D and 3-D Moore halos,
ghost widths 1-3, local interiors n = 8..256 per dimension, 8-byte elements, under the
built-in cost model (docs/halo.md). Runs `cartplan halo explain --format json` per point and
prints a markdown table: the predicted time of the busiest rank per candidate, bytes each rank
sends, and the pick. Without --dims: a rank whose neighbours are all other processes.

    python3 bench/halo_model_table.py bazel-bin/tools/cartplan > table.md
"""
import json
import subprocess
import sys

cartplan = sys.argv[1]
print("| d | n | ghost | direct us | combining us | dimwise us | picked | bytes sent/rank (direct = dimwise) | combining bytes/rank | messages direct / dimwise |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d in (2, 3):
    for n in (8, 32, 128, 256):
        for g in (1, 2, 3):
            args = [cartplan, "halo", "explain", "--interior", ",".join([str(n)] * d), "--ghost", str(g), "--elem", "8",
                    "--stencil", "moore:d=%d,r=1" % d, "--format", "json"]
            j = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
            c = {x["algorithm"]: x for x in j["candidates"]}
            pick = next(x["algorithm"] for x in j["candidates"] if x["picked"])
            assert c["dimwise"]["bytes_sent"] == c["direct"]["bytes_sent"] == c["dimwise"]["ghost_bytes"]
            print("| %d | %d | %d | %.2f | %.2f | %.2f | %s | %d | %d | %d / %d |" % (
                d, n, g, c["direct"]["predicted_us"], c["combining"]["predicted_us"], c["dimwise"]["predicted_us"], pick,
                c["dimwise"]["bytes_sent"], c["combining"]["bytes_sent"], c["direct"]["messages"], c["dimwise"]["messages"]))
