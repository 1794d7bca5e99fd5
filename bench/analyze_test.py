#!/usr/bin/env python3
"""Tests of analyze.py on small made-up CSVs: the ratio table, the speed-up and packed-proxy
targets (with proxy_floor beside them, and the deep halos left out), and the auto-selection
check with its crossovers. Runs the script as run.sh does, without gnuplot."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXCHANGE_FIELDS = ["np", "stencil", "op", "m", "variant", "median_us", "ratio_to_mpi"]
AUTO_FIELDS = ["np", "stencil", "op", "m", "variant", "median_us", "ratio_to_mpi", "program", "pred_direct_us",
               "pred_combining_us"]


def write(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def point(stencil, op, m, times, np_=2):
    """exchange_np*.csv rows of one point; times: {variant: median_us}, with mpi_neighbor."""
    mpi = times["mpi_neighbor"]
    return [{"np": np_, "stencil": stencil, "op": op, "m": m, "variant": v, "median_us": t, "ratio_to_mpi": t / mpi}
            for v, t in times.items()]


def auto_point(stencil, op, m, direct, combining, auto, picked, pred_direct, pred_combining):
    rows = []
    for v, t, prog in (("cart_direct_persistent", direct, "P_direct"), ("cart_combining_persistent", combining, "P_comb"),
                       (f"cart_auto_persistent({picked})", auto, "P_direct" if picked == "direct" else "P_comb")):
        rows.append({"np": 2, "stencil": stencil, "op": op, "m": m, "variant": v, "median_us": t, "ratio_to_mpi": 1,
                     "program": prog, "pred_direct_us": pred_direct, "pred_combining_us": pred_combining})
    return rows


class AnalyzeTest(unittest.TestCase):
    def run_analyze(self, exchange_rows, auto_rows=None):
        out = tempfile.mkdtemp()
        write(os.path.join(out, "exchange_np2.csv"), EXCHANGE_FIELDS, exchange_rows)
        if auto_rows:
            write(os.path.join(out, "auto_np2.csv"), AUTO_FIELDS, auto_rows)
        # No gnuplot on this PATH: the summary only.
        r = subprocess.run([sys.executable, os.path.join(HERE, "analyze.py"), out], capture_output=True, text=True,
                           env={"PATH": "/nonexistent"})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.md")) as f:
            return f.read()

    def sweep(self):
        rows = []
        # d = 4, m = 1: combining 5x faster than MPI (target 4x: met); blocking 3x (MISSED).
        rows += point("box:d=4,n=3,f=-1", "alltoall", 1,
                      {"mpi_neighbor": 10.0, "cart_combining_persistent": 2.0, "cart_combining_blocking": 10 / 3,
                       "packed_proxy": 1.8, "proxy_floor": 1.9})
        # Allgather m = 100: 2x the proxy (a miss), 1.25x the floor.
        rows += point("box:d=4,n=3,f=-1", "allgather", 100,
                      {"mpi_neighbor": 20.0, "cart_combining_persistent": 4.0, "packed_proxy": 2.0, "proxy_floor": 3.2})
        # m = 1000 is beyond the target's m <= 100: not counted, however slow.
        rows += point("box:d=4,n=3,f=-1", "alltoall", 1000,
                      {"mpi_neighbor": 20.0, "cart_combining_persistent": 40.0, "packed_proxy": 2.0, "proxy_floor": 2.0})
        # A deep halo is not in the target's box sweep (f=-4), however slow.
        rows += point("box:d=2,n=9,f=-4", "alltoall", 1,
                      {"mpi_neighbor": 20.0, "cart_combining_persistent": 9.0, "packed_proxy": 1.0, "proxy_floor": 1.0})
        # alltoallv: within 1.3x of both.
        rows += point("box:d=3,n=3,f=-1", "alltoallv", 10,
                      {"mpi_neighbor": 5.0, "cart_combining_persistent": 2.4, "packed_proxy": 2.0, "proxy_floor": 2.2})
        return rows

    def test_ratio_table(self):
        s = self.run_analyze(self.sweep())
        self.assertIn("| neighbourhood | op | m (ints) | MPI_Neighbor us | combining pers. | direct pers. | auto pers. | "
                      "combining blk. | mpi_ineighbor | mpix pers. | packed_proxy | proxy_floor |", s)
        # d4n3 allgather m=100: 4/20, no direct or auto rows, proxy 2/20, floor 3.2/20.
        self.assertIn("| d4n3 | allgather | 100 | 20.0 | 0.20 | - | - | - | - | - | 0.10 | 0.16 |", s)

    def test_speedup_targets(self):
        s = self.run_analyze(self.sweep())
        self.assertIn("- box:d=4,n=3,f=-1 alltoall m=1, cart_combining_persistent vs MPI_Neighbor_alltoall: 5.0x faster "
                      "(target 4x): met", s)
        self.assertIn("- box:d=4,n=3,f=-1 alltoall m=1, cart_combining_blocking vs MPI_Neighbor_alltoall: 3.0x faster "
                      "(target 4x): MISSED", s)
        self.assertIn("- box:d=5,n=3 alltoall m=1: not measured", s)

    def test_proxy_target_and_floor(self):
        s = self.run_analyze(self.sweep())
        self.assertIn("- persistent combining / packed proxy, alltoall/allgather, m <= 100: within 1.3x in 1 of 2 cases; "
                      "worst 2.00x at d4n3 allgather m=100 (target 1.3x): MISSED", s)
        self.assertIn("- persistent combining / packed proxy, alltoallv, m <= 100: within 1.3x in 1 of 1 cases; "
                      "worst 1.20x at d3n3 alltoallv m=10 (target 1.3x): met", s)
        self.assertIn("- persistent combining / proxy floor, alltoall/allgather, m <= 100: within 1.3x in 2 of 2 cases; "
                      "worst 1.25x at d4n3 allgather m=100 (not a target: the proxy plus the copies no plan avoids)\n", s)

    def test_auto_selection(self):
        auto = []
        # m = 1: auto ran direct at 1.2x combining (a miss of the choice); m = 16: combining slower.
        auto += auto_point("box:d=2,n=3,f=-1", "alltoall", 1, 3.6, 3.0, 3.7, "direct", 1.0, 2.0)
        auto += auto_point("box:d=2,n=3,f=-1", "alltoall", 16, 4.0, 5.0, 4.2, "direct", 1.0, 2.0)
        s = self.run_analyze(self.sweep(), auto)
        self.assertIn("| 2 | d2n3 | alltoall | 1 | 3.60 | 3.00 | 3.70 | direct | 1.23 | 1.20 |", s)
        self.assertIn("| 2 | d2n3 | alltoall | 16 | 4.00 | 5.00 | 4.20 | direct | 1.05 | 1.00 |", s)
        self.assertIn("Worst auto / min(direct, combining): 1.23 at ('2', 'box:d=2,n=3,f=-1', 'alltoall', 1)", s)
        self.assertIn("Worst pick / min(direct, combining): 1.20", s)
        # Combining is first slower at m = 16; the model prices it dearer from m = 1.
        self.assertIn("- np=2 d2n3 alltoall: measured 16, predicted 1", s)


if __name__ == "__main__":
    unittest.main()
