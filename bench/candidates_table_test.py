#!/usr/bin/env python3
"""Tests of the auto check that candidates_table.py and confirm_misses.py share: pick / best
with equal programs merged, the A/A spreads, and which points confirm_misses.py measures again."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import candidates_table as ct  # noqa: E402
import confirm_misses  # noqa: E402


def row(median, program="", pick=None, predicted=""):
    r = {"median_us": str(median), "program": program, "predicted_us": str(predicted)}
    if pick is not None:
        r["auto_pick"] = pick
    return r


class JudgeTest(unittest.TestCase):
    def test_pick_against_best(self):
        vs = {"cand:direct": row(10, "p1", predicted=1), "cand:combining": row(5, "p2", predicted=2),
              "cart_auto_persistent(direct)": row(10, "p1", pick="direct")}
        best, best_t, pick, pick_t, ratio = ct.judge(vs)
        self.assertEqual((best, best_t, pick, pick_t), ("combining", 5.0, "direct", 10.0))
        self.assertAlmostEqual(ratio, 2.0)

    def test_equal_programs_are_one_choice(self):
        # Auto picked combining; hybrid runs the same program and ran faster: the pick ran 4.
        vs = {"cand:combining": row(6, "p2"), "cand:hybrid": row(4, "p2"), "cand:direct": row(5, "p1"),
              "cart_auto_persistent(combining)": row(6, "p2", pick="combining")}
        best, _, pick, pick_t, ratio = ct.judge(vs)
        self.assertEqual((best, pick, pick_t), ("hybrid", "combining|hybrid", 4.0))
        self.assertAlmostEqual(ratio, 1.0)

    def test_no_candidates(self):
        self.assertIsNone(ct.judge({"mpi_neighbor": row(3)}))

    def test_no_auto_request(self):
        self.assertIsNone(ct.judge({"cand:direct": row(3, "p1")})[4])

    def test_measured_pick(self):
        # Measuring mode ran combining (its runs column), the model picked direct.
        measured = row(5.2, "p2")
        measured["runs"] = "combining"
        vs = {"cand:direct": row(10, "p1"), "cand:combining": row(5, "p2"),
              "cart_auto_persistent(direct)": row(10, "p1", pick="direct"), "cart_measured_persistent": measured}
        best, _, pick, pick_t, ratio = ct.judge_measured(vs)
        self.assertEqual((best, pick, pick_t), ("combining", "combining", 5.0))
        self.assertAlmostEqual(ratio, 1.0)
        self.assertAlmostEqual(ct.judge(vs)[4], 2.0)  # auto is judged apart
        lines = "\n".join(ct.measured_check({(2, "2x1", "box:d=2,n=3,f=-1", "alltoall", 1): vs}))
        self.assertIn("within 10% of the best in 1 of 1 points", lines)
        self.assertIn("another plan than the model's pick in 1", lines)

    def test_no_measured_request(self):
        self.assertIsNone(ct.judge_measured({"cand:direct": row(3, "p1")}))
        self.assertEqual(ct.measured_check({"k": {"cand:direct": row(3, "p1")}}), [])

    def test_aa_spread(self):
        vs = {"cand:direct": row(10, "p1"), "cart_direct_persistent": row(12, "p1"), "cand:combining": row(5, "p2")}
        spreads = ct.aa_spreads({"k": vs})
        self.assertEqual(len(spreads), 1)
        self.assertAlmostEqual(spreads[0][0], 1.2)


class MissesTest(unittest.TestCase):
    def test_only_points_above_tolerance(self):
        miss = {"cand:direct": row(11.5, "p1"), "cand:combining": row(10, "p2"),
                "cart_auto_persistent(direct)": row(11.5, "p1", pick="direct")}
        within = {"cand:direct": row(10.9, "p1"), "cand:combining": row(10, "p2"),
                  "cart_auto_persistent(direct)": row(10.9, "p1", pick="direct")}
        points = {(2, "2x1", "box:d=2,n=3,f=-1", "alltoall", 1): miss,
                  (2, "2x1", "box:d=2,n=3,f=-1", "alltoall", 16): within}
        found = confirm_misses.misses(points)
        self.assertEqual([key[4] for key, _ in found], [1])
        self.assertAlmostEqual(found[0][1][4], 1.15)

    def test_model_per_process_count(self):
        self.assertEqual(confirm_misses.model_for({8: "np8.json", None: "all.json"}, 8), "np8.json")
        self.assertEqual(confirm_misses.model_for({8: "np8.json", None: "all.json"}, 2), "all.json")
        self.assertIsNone(confirm_misses.model_for({8: "np8.json"}, 2))


if __name__ == "__main__":
    unittest.main()
