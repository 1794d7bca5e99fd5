#!/usr/bin/env python3
"""Tests of margin_history.py on a throw-away git repository with two committed versions of a
candidate CSV (and one repeated): the margin buckets and the replay of pick_candidate."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import margin_history as mh  # noqa: E402

FIELDS = ["dims", "stencil", "op", "m", "variant", "median_us", "predicted_us"]


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def commit(repo, cands, message):
    """cands: {candidate: (measured, predicted)} of one point."""
    with open(os.path.join(repo, "c.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerow({"dims": "2x1", "stencil": "s", "op": "alltoall", "m": 1, "variant": "mpi_neighbor", "median_us": 1,
                    "predicted_us": ""})
        for name, (measured, predicted) in cands.items():
            w.writerow({"dims": "2x1", "stencil": "s", "op": "alltoall", "m": 1, "variant": "cand:" + name,
                        "median_us": measured, "predicted_us": predicted})
    git(repo, "add", "c.csv")
    git(repo, "commit", "--allow-empty", "-q", "-m", message)


class MarginHistoryTest(unittest.TestCase):
    def setUp(self):
        self.repo = tempfile.mkdtemp()
        git(self.repo, "init", "-q")
        # Run 1: hybrid predicted 5 % below combining, ran 1.2x slower.
        commit(self.repo, {"direct": (9, 9), "combining": (5, 5), "hybrid": (6, 4.75)}, "run 1")
        # Run 2: log-round predicted 30 % below, ran faster; hybrid predicted dearer.
        commit(self.repo, {"direct": (9, 9), "combining": (5, 5), "log-round": (4, 3.5), "hybrid": (7, 6)}, "run 2")
        commit(self.repo, {"direct": (9, 9), "combining": (5, 5), "log-round": (4, 3.5), "hybrid": (7, 6)}, "same again")

    def run_script(self, *args):
        r = subprocess.run([sys.executable, os.path.join(HERE, "margin_history.py"), "--repo", self.repo, *args, "c.csv"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_buckets(self):
        out = self.run_script()
        self.assertIn("over 2 committed CSV versions", out)  # the repeated version counts once
        self.assertIn("| hybrid | 0.03-0.06 | 1 | 0 | 1 |", out)
        self.assertIn("| log-round | 0.20-1.00 | 1 | 1 | 0 |", out)
        self.assertNotIn("| hybrid | 0.10", out)  # a refinement predicted dearer is not a case

    def test_replay(self):
        out = self.run_script("--hybrid-gains", "0.03,0.10")
        # Gain 0.03 takes run 1's hybrid (a miss); 0.10 keeps combining. Run 2: log-round either way.
        self.assertIn("| c.csv | 1 of 2 | 2 of 2 |", out)
        out = self.run_script("--newest", "1", "--hybrid-gains", "0.03")
        self.assertIn("| c.csv | 1 of 1 |", out)

    def test_pick_matches_the_optimizer_rule(self):
        cands = {"direct": 2.0, "combining": 3.0, "hybrid": 1.85, "log-round": 1.9}
        # Hybrid 7.5 % below direct misses 0.10; log-round 5 % below clears 0.03.
        self.assertEqual(mh.pick(cands, 0.03, 0.10), "log-round")
        self.assertEqual(mh.pick(cands, 0.03, 0.03), "hybrid")
        self.assertEqual(mh.pick(cands, 0.06, 0.10), "direct")
        self.assertEqual(mh.pick({"log-round": 2.0, "hybrid": 1.0}, 0.03, 0.10), "hybrid")


if __name__ == "__main__":
    unittest.main()
