#!/usr/bin/env python3
"""Tests of overlap_holdout.py's rule and folds on made-up rows (no cartplan): the value chosen is the one
with most picks within 5 % among those that make no pick slower than the library's, ties to fewer slower
than the loop and then the smaller value; a fold holds out exactly the points of one value."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overlap_holdout as h  # noqa: E402


def row(measured, best=10.0, loop=10.0):
    """An evaluate() row: (run, pick, predictions, measured pick, best, loop)."""
    return (None, "direct", {}, measured, best, loop)


class Rule(unittest.TestCase):
    def setUp(self):
        self.base = [row(11.0), row(11.0), row(10.0)]  # the library: 1 of 3 within 5 %, 2 slower than the loop

    def test_tally(self):
        self.assertEqual(h.tally(self.base, self.base, range(3)), (1, 2, 0))
        self.assertEqual(h.tally([row(10.0), row(12.0), row(10.0)], self.base, range(3)), (2, 1, 1))
        self.assertEqual(h.tally([row(10.0), row(12.0), row(10.0)], self.base, [0, 2]), (2, 0, 0))

    def test_most_within_among_those_harming_none(self):
        table = {0.0: self.base,
                 0.5: [row(10.0), row(11.0), row(10.0)],  # 2 within, harms none
                 1.0: [row(10.0), row(10.0), row(12.0)]}  # 2 within and fewer slower, but point 2 runs slower
        self.assertEqual(h.choose(table, self.base, range(3)), 0.5)
        self.assertEqual(h.choose(table, self.base, [0, 1]), 1.0)  # without point 2, 1.0 harms none

    def test_ties_to_fewer_slower_then_smaller(self):
        table = {0.2: [row(10.0), row(11.0), row(10.0)], 0.4: [row(10.0), row(11.0), row(10.0)]}
        self.assertEqual(h.choose(table, self.base, range(3)), 0.2)
        table[0.6] = [row(10.0), row(10.4, best=9.0), row(10.0)]  # as many within, one fewer slower
        self.assertEqual(h.choose(table, self.base, range(3)), 0.6)


class Folds(unittest.TestCase):
    def test_each_value_held_out_once(self):
        runs = [{"np": 64}, {"np": 256}, {"np": 64}]
        self.assertEqual(list(h.folds(runs, "np")), [("64", [0, 2], [1]), ("256", [1], [0, 2])])


if __name__ == "__main__":
    unittest.main()
