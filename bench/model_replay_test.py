#!/usr/bin/env python3
"""Tests of model_replay.py against the real `cartplan plan --explain`, with a linear cost model
written by the test (so the picks are known): the optimizer's own pick, the hybrid's larger
gain, picks that were not measured, and alltoallv's block sizes."""
import csv
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_replay  # noqa: E402
from test_support import CliTestCase  # noqa: E402


# CliTestCase's linear model: 1 us per message, 0.001 us per byte. On the 2x1 grid,
# box:d=2,n=9,f=-4 prices
# (direct, combining, log-round, hybrid) at (36.1, 4.1, 2.1, 8.1) us with 4-byte blocks, where
# log-round is 48 % cheaper than combining, and (180, 148, 146, 152) us with 4000-byte blocks,
# where it is 1.4 % cheaper: less than engine::kRefinementGain, so the optimizer keeps combining.
DEEP = "box:d=2,n=9,f=-4"
FIELDS = ["np", "stencil", "op", "m", "variant", "median_us", "dims"]


class ModelReplayTest(CliTestCase):
    def write_csv(self, points):
        """points: {(stencil, op, m): {candidate: median_us}} on the 2x1 grid."""
        path = os.path.join(self.dir, "cands.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            for (stencil, op, m), cands in points.items():
                # A baseline row, as exchange_bench writes: not a candidate, must be ignored.
                w.writerow({"np": 2, "stencil": stencil, "op": op, "m": m, "variant": "mpi_neighbor", "median_us": 0.01,
                            "dims": "2x1"})
                for name, t in cands.items():
                    w.writerow({"np": 2, "stencil": stencil, "op": op, "m": m, "variant": "cand:" + name,
                                "median_us": t, "dims": "2x1"})
        return path

    def replay(self, csv_path, *extra):
        out = subprocess.run([sys.executable, os.path.join(HERE, "model_replay.py"), "--cartplan", self.cartplan,
                              "--cost-model", self.model, "--list", *extra, csv_path],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def deep_points(self):
        # m = 1: the model picks log-round, which ran fastest. m = 1000: the model keeps
        # combining, and log-round ran 1.25x faster: a miss.
        return self.write_csv({
            (DEEP, "alltoall", 1): {"direct": 5.0, "combining": 2.0, "log-round": 1.0, "hybrid": 3.0},
            (DEEP, "alltoall", 1000): {"direct": 20.0, "combining": 10.0, "log-round": 8.0, "hybrid": 12.0},
        })

    def test_the_optimizers_own_pick(self):
        out = self.replay(self.deep_points())
        self.assertIn("m=1     pick log-round", out)
        self.assertIn("m=1000  pick combining", out)
        self.assertRegex(out, r"best log-round\s+1\.25  MISS")
        self.assertIn("within 10% of the best measured candidate in 1 of 2 points", out)

    def test_the_hybrid_needs_its_own_gain(self):
        # With a fitted (v2) model from this VM, the deep halo's alltoallv at m = 1000: since the
        # segment term was dropped (docs/cost-model.md, "Dropped terms") the hybrid is predicted
        # dearer than combining in every term (8 messages against 4, more copied bytes), so the
        # optimizer keeps combining, and so does the replay (it reads the optimizer's own pick).
        with open(self.model, "w") as f:
            f.write('{"schema": "cartplan.cost_model/2", "alpha_us": 0.148, "beta_us_per_byte": 0.000113, '
                    '"phase_us": 1.41, "copy_us_per_byte": 1.48e-05, "eager_limit_bytes": 4064, "rendezvous_us": 1.95, '
                    '"single_copy_us_per_byte": 0.0, "pipeline_us": 0.958, "pipeline_us_per_byte": -4.16e-05, '
                    '"segment_us": 0.0124, "scatter_us_per_byte": 0.0}')
        path = self.write_csv({(DEEP, "alltoallv", 1000): {"direct": 9.0, "combining": 4.8, "log-round": 6.0,
                                                            "hybrid": 5.376}})
        self.assertIn("pick combining", self.replay(path))

    def test_accuracy_compares_measured_and_predicted(self):
        # Measured at exactly twice what the linear model predicts: every ratio is 2.00; the
        # hybrid is left out (its plan depends on the model).
        preds = {}
        for m in (1, 1000):
            out = subprocess.run([self.cartplan, "plan", "--op", "alltoall", "--stencil", DEEP, "--dims", "2,1",
                                  "--cost-model", self.model, "--explain", "--block-bytes", str(4 * m)],
                                 capture_output=True, text=True, check=True).stdout
            preds[m] = {mm.group(1): float(mm.group(2)) for mm in map(model_replay.LINE.match, out.splitlines()) if mm}
        path = self.write_csv({(DEEP, "alltoall", m): {k: 2 * v for k, v in p.items()} for m, p in preds.items()})
        out = self.replay(path, "--accuracy")
        self.assertIn("measured / predicted, all: median 2.00, 10th percentile 2.00, 90th percentile 2.00 "
                      "(6 candidates)", out)
        self.assertIn("measured / predicted, log-round: median 2.00", out)
        self.assertNotIn("measured / predicted, hybrid", out)
        self.assertEqual(model_replay.quantile([1.0, 2.0, 3.0, 4.0], 0.5), 2.5)

    def test_a_pick_without_measurement_is_counted_apart(self):
        path = self.write_csv({(DEEP, "alltoall", 1): {"direct": 5.0, "combining": 2.0}})
        out = self.replay(path)
        self.assertIn("pick log-round not measured", out)
        self.assertIn("in 0 of 0 points (1 picks not measured)", out)

    def test_alltoallv_blocks_are_the_halo_sizes(self):
        args = model_replay.block_args("box:d=2,n=3,f=-1", "alltoallv", 10, self.cartplan)
        self.assertEqual(args[0], "--block-sizes")
        # The zero offset (box's f=-1 keeps it) sends nothing; four faces of m^(d-1) = 10 ints,
        # four corners of m^0 = 1 int.
        self.assertEqual(sorted(int(x) for x in args[1].split(",")), [0] + [4] * 4 + [40] * 4)
        self.assertEqual(model_replay.block_args(DEEP, "allgather", 7, self.cartplan), ["--block-bytes", "28"])

    def test_a_failing_cartplan_is_an_error(self):
        path = self.write_csv({("box:d=2,n=3", "alltoall", 1): {"direct": 1.0}})  # malformed spec
        out = subprocess.run([sys.executable, os.path.join(HERE, "model_replay.py"), "--cartplan", self.cartplan,
                              "--cost-model", self.model, path], capture_output=True, text=True)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("model_replay.py: ", out.stderr)


if __name__ == "__main__":
    unittest.main()
