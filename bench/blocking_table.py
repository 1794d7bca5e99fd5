"""Tables of the blocking / non-blocking targets from an exchange_bench CSV (bench/blocking.sh)."""
import csv
import sys

# Blocking combining alltoall of the paper authors' library (cached schedule, no argument
# checks), m = 1, measured beside cartplan on this machine kind (issue 8): d -> microseconds.
PAPER_US = {3: 4.2, 4: 7.4, 5: 18.6}
SPEEDUP_TARGET = {4: 4.0, 5: 10.0}


def main(path):
    rows = list(csv.DictReader(open(path)))
    cases = {}
    for r in rows:
        cases.setdefault((int(r["d"]), r["op"], int(r["m"])), {})[r["variant"]] = r
    print("Medians in microseconds (quartiles in the CSV), np = %s, m = 1 int. Ratios: time / time.\n" % rows[0]["np"])
    print("| d | t | op | MPI_Neighbor | blocking combining | speedup (target) | blocking direct / MPI (<= 1.05) "
          "| persistent combining | blocking / persistent (<= 1.3) | Cart_i + wait | MPI_Ineighbor | paper's blocking |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (d, op, m), v in sorted(cases.items()):
        med = lambda name: float(v[name]["median_us"]) if name in v else float("nan")
        mpi = med("mpi_neighbor")
        comb_b, comb_p = med("cart_combining_blocking"), med("cart_combining_persistent")
        direct_b = med("cart_direct_blocking")
        target = SPEEDUP_TARGET.get(d)
        speedup = "%.1fx (%s)" % (mpi / comb_b, ">= %.0fx" % target if target else "-")
        paper = "%.1f" % PAPER_US[d] if op == "alltoall" and d in PAPER_US else "-"
        print("| %d | %s | %s | %.2f | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s |" % (
            d, v["mpi_neighbor"]["t"], op, mpi, comb_b, speedup, direct_b / mpi, comb_p, comb_b / comb_p,
            med("cart_combining_nonblocking"), med("mpi_ineighbor"), paper))


if __name__ == "__main__":
    main(sys.argv[1])
