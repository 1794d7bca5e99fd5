#!/usr/bin/env python3
"""Tests of halo_replay.py against the real `cartplan halo explain`, on made-up tools/halo output: the
model's pick is judged by the run's time of the halo API forced to that plan against the best variant,
the same-message spread compares the variants that send one message per neighbour, and --suffix picks
another model (one that prices phases alone turns the pick from dimwise to direct), and a dimwise pick is judged
order-aware: by the run's halo API dimwise in the run's own model's order, by the hand-written exchange in the
natural order, else unjudged and left out of the counts."""
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
# A node link and overlapped phase sides (bench/results/smpi/nic_overlap's torus prices): at 32 ranks per node
# (fattree) on an 8x8 grid dimwise in order [1,0] (dimension 1 on-node first) beats direct, combining and [0,1];
# LINEAR ties the orders and keeps the natural [0,1].
OVERLAP = ('{"schema": "cartplan.cost_model/2", "alpha_us": 0.59, "phase_us": 0.306, "beta_us_per_byte": 0.000798, '
           '"copy_us_per_byte": 0, "rendezvous_us": 0, "pipeline_us_per_byte": 8.97e-05, "node_link_us_per_byte": 9.48e-05, '
           '"eager_limit_bytes": 8192, "phase_overlap": 1.0}')
PHASES = ('{"schema": "cartplan.cost_model/2", "alpha_us": 0, "beta_us_per_byte": 0, "phase_us": 1, '
          '"copy_us_per_byte": 0, "rendezvous_us": 0, "eager_limit_bytes": 8192}')


def halo_output(times, run_model=None):
    lines = ([f"# CARTPLAN_COST_MODEL={run_model} smpirun -np 64 halo --dims 2 --n 64 --halo 1"] if run_model else []) + ["halo: 2-D 9-point Jacobi, np=64, process grid 8x8, n=64 (local 64x64, global 512x512), halo k=1, periodic=1, iterations=4",
             f"{'variant':<24} {'algorithm':<10} {'us/exchange':>14} {'predicted us':>14} {'bytes/rank':>12}  check"]
    for name, us in times.items():
        algo = "direct" if "direct" in name or "linear" in name else "dimwise"
        lines.append(f"{name:<24} {algo:<10} {us:14.2f} {us + 1:14.2f} {2080:12d}  OK")
    return "\n".join(lines + ["(us/exchange: ...)", "check: OK (bit-for-bit)"]) + "\n"


class HaloReplayTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        for name, text in [("cost_model_torus_p256.json", LINEAR), ("cost_model_torus_p256_ph.json", PHASES),
                           ("cost_model_fattree_p256.json", LINEAR), ("cost_model_fattree_p256_ov.json", OVERLAP)]:
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)
        self.run_file = os.path.join(self.dir, "halo_torus_p64_d2_n64_k1.txt")
        with open(self.run_file, "w") as f:
            f.write(halo_output(TIMES, os.path.join(self.dir, "cost_model_torus_p256.json")))

    def replay(self, *args, run_file=None):
        return subprocess.run([sys.executable, os.path.join(HERE, "halo_replay.py"), "--cartplan", cartplan_binary(),
                               "--model-dir", self.dir, *args, run_file or self.run_file],
                              capture_output=True, text=True, check=True).stdout

    def fattree_run(self, run_suffix):
        """A fattree run whose header names the model cost_model_fattree_p256<run_suffix>.json."""
        path = os.path.join(self.dir, "halo_fattree_p64_d2_n64_k1.txt")
        with open(path, "w") as f:
            f.write(halo_output(TIMES, os.path.join(self.dir, f"cost_model_fattree_p256{run_suffix}.json")))
        return path

    def test_linear_model_picks_dimwise_and_misses(self):
        out = self.replay()
        self.assertIn("| torus | 64 | 2 | 64 | 1 | dimwise (", out)
        self.assertIn("| 10.00 | halo API direct 5.00 | 2.000 **miss** | 1.667 **slower** | 1.20 |", out)
        self.assertIn("unjudged (dimension order not run) at 0 of 1 runs", out)
        self.assertIn("within 5 % of the best variant at 0 of 1 judged runs", out)
        self.assertIn("slower than the linear loop by more than 5 % at 1 of 1 judged runs", out)
        self.assertRegex(out, r"\| dimwise \([0-9.]+\) \[0,1\] \| 10.00 \|")

    def test_phases_model_picks_direct(self):
        out = self.replay("--suffix", "_ph")
        self.assertIn("| direct (", out)
        self.assertIn("| 5.00 | halo API direct 5.00 | 1.000 | 0.833 | 1.20 |", out)
        self.assertIn("within 5 % of the best variant at 1 of 1 judged runs", out)
        self.assertIn("slower than the linear loop by more than 5 % at 0 of 1 judged runs", out)

    def test_order_the_run_did_not_run_is_unjudged(self):
        # replayed [1,0]; the run's model chose [0,1], and [1,0] is not the natural order
        out = self.replay("--suffix", "_ov", run_file=self.fattree_run(""))
        self.assertRegex(out, r"\| dimwise \([0-9.]+\) \[1,0\] \| unjudged: order \[1,0\] not run \| halo API direct 5.00 "
                              r"\| - \| - \| 1.20 \|")
        self.assertIn("unjudged (dimension order not run) at 1 of 1 runs", out)
        self.assertIn("within 5 % of the best variant at 0 of 0 judged runs", out)
        self.assertIn("slower than the linear loop by more than 5 % at 0 of 0 judged runs", out)

    def test_natural_order_judged_by_the_hand_written_exchange(self):
        # replayed [0,1]; the run's model chose [1,0]: the hand-written exchange ran [0,1]
        out = self.replay(run_file=self.fattree_run("_ov"))
        self.assertRegex(out, r"\| dimwise \([0-9.]+\) \[0,1\] \| 9.50 \(hand-written dimwise\) \| halo API direct 5.00 "
                              r"\| 1.900 \*\*miss\*\* \| 1.583 \*\*slower\*\* \|")
        self.assertIn("unjudged (dimension order not run) at 0 of 1 runs", out)
        self.assertIn("within 5 % of the best variant at 0 of 1 judged runs", out)

    def test_the_runs_own_order_judged_by_its_halo_api_dimwise(self):
        # replayed [1,0], which the run's own model chose too
        out = self.replay("--suffix", "_ov", run_file=self.fattree_run("_ov"))
        self.assertRegex(out, r"\| dimwise \([0-9.]+\) \[1,0\] \| 10.00 \| halo API direct 5.00 \| 2.000 \*\*miss\*\* \|")
        self.assertIn("unjudged (dimension order not run) at 0 of 1 runs", out)
        self.assertIn("slower than the linear loop by more than 5 % at 1 of 1 judged runs", out)


if __name__ == "__main__":
    unittest.main()
