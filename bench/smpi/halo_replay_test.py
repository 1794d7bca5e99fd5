#!/usr/bin/env python3
"""Tests of halo_replay.py against the real `cartplan halo explain`, on made-up tools/halo output: the
model's pick is judged by the run's time of the halo API forced to that plan against the best variant,
the same-message spread compares the variants that send one message per neighbour, and --suffix picks
another model (one that prices phases alone turns the pick from dimwise to direct)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from test_support import cartplan_binary  # noqa: E402

TIMES = {"cartplan halo API": 10.0, "halo API direct": 5.0, "halo API combining": 9.0, "halo API dimwise": 10.0,
         "cartplan direct": 5.5, "linear Isend/Irecv": 6.0, "hand-written dimwise": 9.5}
# Linear (1 us per message): dimwise's 4 messages beat direct's 8. Phases alone: direct's single
# phase beats dimwise's two.
LINEAR = '{"schema": "cartplan.cost_model/1", "alpha_us": 1.0, "beta_us_per_byte": 0.001}'
PHASES = ('{"schema": "cartplan.cost_model/2", "alpha_us": 0, "beta_us_per_byte": 0, "phase_us": 1, '
          '"copy_us_per_byte": 0, "rendezvous_us": 0, "eager_limit_bytes": 8192}')


def halo_output(times):
    lines = ["halo: 2-D 9-point Jacobi, np=64, process grid 8x8, n=64 (local 64x64, global 512x512), halo k=1, periodic=1, iterations=4",
             f"{'variant':<24} {'algorithm':<10} {'us/exchange':>14} {'predicted us':>14} {'bytes/rank':>12}  check"]
    for name, us in times.items():
        algo = "direct" if "direct" in name or "linear" in name else "dimwise"
        lines.append(f"{name:<24} {algo:<10} {us:14.2f} {us + 1:14.2f} {2080:12d}  OK")
    return "\n".join(lines + ["(us/exchange: ...)", "check: OK (bit-for-bit)"]) + "\n"


class HaloReplayTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        for name, text in [("cost_model_torus_p256.json", LINEAR), ("cost_model_torus_p256_ph.json", PHASES)]:
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)
        self.run_file = os.path.join(self.dir, "halo_torus_p64_d2_n64_k1.txt")
        with open(self.run_file, "w") as f:
            f.write(halo_output(TIMES))

    def replay(self, *args):
        return subprocess.run([sys.executable, os.path.join(HERE, "halo_replay.py"), "--cartplan", cartplan_binary(),
                               "--model-dir", self.dir, *args, self.run_file], capture_output=True, text=True, check=True).stdout

    def test_linear_model_picks_dimwise_and_misses(self):
        out = self.replay()
        self.assertIn("| torus | 64 | 2 | 64 | 1 | dimwise (", out)
        self.assertIn("| 10.00 | halo API direct 5.00 | 2.000 **miss** | 1.667 **slower** | 1.20 |", out)
        self.assertIn("within 5 % of the best variant at 0 of 1 runs", out)
        self.assertIn("slower than the linear loop by more than 5 % at 1 of 1 runs", out)
        self.assertRegex(out, r"\| dimwise \([0-9.]+\) \[[01],[01]\] \| 10.00 \|")

    def test_phases_model_picks_direct(self):
        out = self.replay("--suffix", "_ph")
        self.assertIn("| direct (", out)
        self.assertIn("| 5.00 | halo API direct 5.00 | 1.000 | 0.833 | 1.20 |", out)
        self.assertIn("within 5 % of the best variant at 1 of 1 runs", out)
        self.assertIn("slower than the linear loop by more than 5 % at 0 of 1 runs", out)


if __name__ == "__main__":
    unittest.main()
