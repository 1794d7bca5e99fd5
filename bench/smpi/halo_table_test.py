#!/usr/bin/env python3
"""Tests of halo_table.py on made-up tools/halo output: the row names the best variant, auto / best,
whether it is within 5 %, the hand-written exchange and bytes; rows are sorted by p, d, n, k and
platform; --runs takes each variant's median over runs and its range, and auto against the best."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def halo_output(d, n, k, np_, times, check="OK (bit-for-bit)"):
    """tools/halo's report with times {variant: us}; predicted = us + 1, bytes = 100 per variant (--runs shows the
    first run's prediction: a plan's prediction is the same in every run)."""
    lines = [f"halo: {d}-D 9-point Jacobi, np={np_}, process grid 8x8, n={n} (local {n}x{n}, global 64x64), halo k={k}, periodic=1, iterations=4",
             "auto chose: combining",
             f"{'variant':<24} {'algorithm':<10} {'us/exchange':>14} {'predicted us':>14} {'bytes/rank':>12}  check"]
    for name, us in times.items():
        algo = "dimwise" if "API" in name or "hand" in name else "direct"
        lines.append(f"{name:<24} {algo:<10} {us:14.2f} {us + 1:14.2f} {100:12d}  OK")
    lines += ["(us/exchange: ...", " ...)", f"check: {check}"]
    return "\n".join(lines) + "\n"


def table(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "halo_table.py"), *args], capture_output=True, text=True, check=True).stdout


class HaloTableTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_row_best_ratio_and_order(self):
        a = self.write("halo_torus_p64_d2_n8_k1.txt", halo_output(2, 8, 1, 64, {"cartplan halo API": 10.0, "halo API direct": 8.0,
                                                                                "hand-written dimwise": 10.5}))
        b = self.write("halo_fattree_p64_d2_n8_k1.txt", halo_output(2, 8, 1, 64, {"cartplan halo API": 4.0, "hand-written dimwise": 4.1}))
        rows = [line for line in table(a, b).splitlines() if line.startswith("| ") and "platform" not in line]
        self.assertEqual(len(rows), 2)
        self.assertTrue(rows[0].startswith("| fattree |"), rows)  # sorted: same point, platforms alphabetical
        self.assertIn("| 1.000 | yes |", rows[0])
        self.assertIn("halo API direct (8.00 (9.00))", rows[1])
        self.assertIn("| 1.250 | **no** |", rows[1])
        self.assertIn("10.50 (11.50)", rows[1])  # the hand-written exchange with its prediction
        self.assertIn("100 / 100", rows[1])

    def test_runs_median_range(self):
        paths = [self.write(f"r{i}.txt", halo_output(2, 64, 1, 4, {"cartplan halo API": t, "MPI_Neighbor_alltoallw": 10.0}))
                 for i, t in enumerate([9.0, 12.0, 10.5])]
        out = table("--runs", *paths)
        self.assertIn("| cartplan halo API | dimwise | 10.50 | 9.00-12.00 | 10.00 | 100 |", out)
        self.assertIn("halo API auto / best (MPI_Neighbor_alltoallw): 1.050", out)
        self.assertIn("halo API auto / MPI_Neighbor_alltoallw: 1.050", out)

    def test_variants_measured_and_predicted(self):
        a = self.write("halo_torus_p64_d3_n256_k1.txt", halo_output(3, 256, 1, 64, {"cartplan halo API": 10.0, "halo API direct": 8.0,
                                                                                   "cartplan direct": 8.5}))
        rows = [line for line in table("--variants", a).splitlines() if line.startswith("| torus")]
        self.assertEqual(len(rows), 1)
        self.assertIn("| 10.00 (11.00) | 8.00 (9.00) | - | - | - | 8.50 (9.50) |", rows[0])  # absent variants: -
        self.assertIn("halo API direct: 1.250 |", rows[0])

    def test_linear_per_platform_verdicts(self):
        def run(name, d, n, auto, loop):
            return self.write(name, halo_output(d, n, 1, 256, {"cartplan halo API": auto, "linear Isend/Irecv": loop,
                                                               "halo API direct": 7.0}))
        paths = [run("halo_torus_p256_d2_n256_k1.txt", 2, 256, 12.0, 10.0),   # slower: 1.2
                 run("halo_torus_p256_d2_n8_k1.txt", 2, 8, 5.0, 10.0),        # faster: 2x
                 run("halo_torus_p256_d2_n64_k1.txt", 2, 64, 10.4, 10.0),     # within 5 %
                 run("halo_dragonfly_p256_d2_n8_k1.txt", 2, 8, 10.6, 10.0),   # slower: 1.06
                 self.write("halo_fattree_p256_d2_n8_k1.txt", halo_output(2, 8, 1, 256, {"cartplan halo API": 1.0}))]  # no loop: no row
        out = table("--linear", *paths)
        self.assertNotIn("### fattree", out)
        self.assertLess(out.index("### dragonfly"), out.index("### torus"))
        torus = out[out.index("### torus"):]
        rows = [line for line in torus.splitlines() if line.startswith("| 256 ")]
        self.assertEqual([r.split(" | ")[2] for r in rows], ["8", "64", "256"])  # sorted by n
        self.assertIn("| 0.500 | +5.00 | faster, 2.00x |", rows[0])
        self.assertIn("| 1.040 | -0.40 | within 5 % |", rows[1])
        self.assertIn("| 1.200 | -2.00 | **slower by more than 5 %** (1.20x the loop's time) |", rows[2])
        self.assertIn("halo API direct 7.00", rows[2])
        self.assertIn("torus: 3 points: auto against the loop 1 faster, 1 within 5 %, 1 slower", torus)
        self.assertIn("dragonfly: 1 points: auto against the loop 0 faster, 0 within 5 %, 1 slower", out)
        plans = out[out.index("### Slower than the loop"):]
        self.assertEqual(len([line for line in plans.splitlines() if line.startswith(("| torus", "| dragonfly"))]), 2)


if __name__ == "__main__":
    unittest.main()
