#!/usr/bin/env python3
"""Tests of sweep_table.py on made-up collective_bench output: one row per point with the best
candidate, auto / best, linear / auto, the predictions beside the times, WRONG when any variant's
data was wrong, the command with the row's m, and the header written once."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ["cart_auto_persistent", "cart_auto_blocking", "cart_direct_persistent", "cart_direct_blocking",
            "cart_combining_persistent", "cart_combining_blocking", "cart_hybrid_persistent", "cart_hybrid_blocking",
            "cart_loground_persistent", "cart_loground_blocking", "linear", "linear_persistent"]


def bench_output(m, times, algos, wrong=None):
    """collective_bench lines of one point: times/algos by variant (missing ones get 9.0/direct)."""
    lines = ["# process grid 4x4x4", "# np stencil op m variant algorithm us sync_us predicted_us check"]
    for v in VARIANTS:
        check = "WRONG" if v == wrong else "OK"
        t = times.get(v, 9.0)  # synchronized; the back-to-back time is 2 us more
        lines.append(f"64 box:d=3,n=3,f=-1 alltoall {m} {v} {algos.get(v, 'direct')} {t + 2:.3f} {t:.3f} 5.000 {check}")
    return "\n".join(lines) + "\n"


def run(text, out):
    cmd = 'bash bench/smpi/sweep.sh --platform torus --np 64 --m "$M" --model m.json'
    return subprocess.run([sys.executable, os.path.join(HERE, "sweep_table.py"), "--platform", "torus", "--model", "dir/m.json",
                           "--command", cmd, "--out", out], input=text, capture_output=True, text=True)


class SweepTableTest(unittest.TestCase):
    def test_rows(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "t.md")
            times = {"cart_auto_persistent": 4.0, "cart_direct_persistent": 8.0, "cart_combining_persistent": 4.0,
                     "cart_hybrid_persistent": 3.2, "cart_loground_persistent": 4.0, "linear": 10.0, "cart_auto_blocking": 4.1}
            r = run(bench_output(1, times, {"cart_auto_persistent": "combining"}) +
                    bench_output(100, {"cart_auto_persistent": 6.0, "cart_direct_persistent": 6.0, "linear": 6.6}, {},
                                 wrong="cart_hybrid_blocking"), out)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = [l for l in open(out).read().splitlines() if l.startswith("| torus")]
            self.assertEqual(len(rows), 2)
            first = [c.strip() for c in rows[0].split("|")[1:-1]]
            self.assertEqual(first[4], "1")                          # m
            self.assertEqual(first[5], "m.json")                     # model file name
            self.assertEqual(first[6], "10.00 (5.00)")               # linear, measured (predicted)
            self.assertEqual(first[7], "4.00 (5.00) combining")      # auto and its plan
            self.assertEqual(first[13], "hybrid")                    # best candidate
            self.assertEqual(first[14], "1.25")                      # auto / best = 4.0 / 3.2
            self.assertEqual(first[15], "2.50")                      # linear / auto
            self.assertEqual(first[16], "6.00")                      # auto back to back
            self.assertEqual(first[17], "12.00")                     # linear back to back
            self.assertEqual(first[18], "OK")
            self.assertIn("--m 1 ", first[19])
            second = [c.strip() for c in rows[1].split("|")[1:-1]]
            self.assertEqual(second[18], "WRONG")
            self.assertIn("--m 100 ", second[19])
            run(bench_output(1000, times, {}), out)                  # appending: the header stays single
            self.assertEqual(open(out).read().count("| platform |"), 1)

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("64 too few fields\n", os.path.join(d, "t.md"))
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("not a collective_bench row", r.stderr)


if __name__ == "__main__":
    unittest.main()
