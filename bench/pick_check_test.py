#!/usr/bin/env python3
"""Tests of pick_check.py against the real `cartplan plan --explain`, with a linear cost model
written by the test: MPI_Dims_create's grids, the pick and its predicted total as the CLI prints
them (small blocks: combining; large blocks on a 4x2 grid: direct), alltoallv's block sizes, and
a failing CLI as an error."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pick_check  # noqa: E402
from test_support import CliTestCase  # noqa: E402

# CliTestCase's model, 1 us per message and 0.001 us per byte: on the 2x1 grid combining's 2
# messages beat direct's 6 with 4-byte blocks; on 4x2 with 400 KB blocks direct moves half the bytes.
BOX2 = "box:d=2,n=3,f=-1"


class PickCheckTest(CliTestCase):
    def test_dims_create_is_mpis(self):
        self.assertEqual(pick_check.dims_create(2, 2), [2, 1])
        self.assertEqual(pick_check.dims_create(8, 3), [2, 2, 2])
        self.assertEqual(pick_check.dims_create(6, 3), [3, 2, 1])
        self.assertEqual(pick_check.dims_create(12, 2), [4, 3])
        self.assertEqual(pick_check.dims_create(64, 3), [4, 4, 4])
        self.assertEqual(pick_check.dims_create(7, 2), [7, 1])

    def test_the_pick_and_its_total_are_the_clis(self):
        dims, chosen, total = pick_check.pick(self.cartplan, self.model, 2, None, BOX2, "alltoall", 1, {})
        self.assertEqual((dims, chosen, total), ([2, 1], "combining", "2.024"))
        dims, chosen, total = pick_check.pick(self.cartplan, self.model, 8, [4, 2], BOX2, "alltoall", 100000, {})
        self.assertEqual((dims, chosen, total), ([4, 2], "direct", "3208.000"))

    def test_alltoallv_blocks_are_the_halo_sizes(self):
        # m^(d-z) ints per block, z its non-zero coordinates: faces m, corners 1, the centre 0.
        args = pick_check.block_args(self.cartplan, BOX2, "alltoallv", 10, {})
        self.assertEqual(args[0], "--block-sizes")
        self.assertEqual(sorted(map(int, args[1].split(","))), [0, 4, 4, 4, 4, 40, 40, 40, 40])
        self.assertEqual(pick_check.block_args(self.cartplan, BOX2, "allgather", 7, {}), ["--block-bytes", "28"])

    def test_a_failing_cartplan_is_an_error(self):
        with self.assertRaises(SystemExit) as e:
            pick_check.pick(self.cartplan, os.path.join(self.dir, "missing.json"), 2, None, BOX2, "alltoall", 1, {})
        self.assertIn("pick_check.py: ", str(e.exception))


if __name__ == "__main__":
    unittest.main()
