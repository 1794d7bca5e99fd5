# p256_gap.md tables: per point, the committed run (bench/results/smpi/halo_*.txt) against its re-run out_<tag>.txt; lines "point committed_file out_file" on stdin.
import os, sys, re
def parse(path):
    rows = {}
    for line in open(path):
        m = re.match(r"^(\S.*?)\s{2,}(\S+)\s+([0-9.]+)\s+(\S+)\s+(\S+)\s+OK", line)
        if m: rows[m[1].strip()] = (m[2], float(m[3]))
    return rows
def ratios(path):
    r = parse(path); a = r["cartplan halo API"]; loop = r["linear Isend/Irecv"][1]
    bn, bv = min(r.items(), key=lambda kv: kv[1][1])
    return f"{a[0]} {a[1]:.2f} | {loop:.2f} | {bn} {bv[1]:.2f} | {a[1]/loop:.3f} | {a[1]/bv[1]:.3f}"
C = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..') + '/'
for name, committed, new in [l.split() for l in sys.stdin if l.strip()]:
    print(f"| {name} | 4 (committed) | {ratios(C + committed)} |")
    try: print(f"| | 24 | {ratios(os.path.join(os.path.dirname(os.path.abspath(__file__)), new))} |")
    except (FileNotFoundError, KeyError): print("| | 24 | not run |")
