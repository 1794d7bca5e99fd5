#!/usr/bin/env python3
"""Tests of osu_paired_summary.py on a made-up osu_paired.csv: the median over launches of each
launch's ratio per size, the count of sizes over 1.05, the drop-in against the native API as the
ratio of the two medians, and the forced-direct overhead as the median of mpi - pmpi at 1-64 B."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = "config,op,form,mode,launch,bytes,mpi_us,pmpi_us,ratio\n"


def summary(rows):
    with tempfile.TemporaryDirectory() as d:
        csv_path, md_path = os.path.join(d, "in.csv"), os.path.join(d, "out.md")
        with open(csv_path, "w") as f:
            f.write(HEADER + "".join(",".join(str(x) for x in r) + "\n" for r in rows))
        subprocess.run([sys.executable, os.path.join(HERE, "osu_paired_summary.py"), csv_path, md_path], check=True)
        return open(md_path).read()


def line_of(text, *cells):
    return next(l for l in text.splitlines() if all("| %s |" % c in l for c in cells))


class PairedSummaryTest(unittest.TestCase):
    def test_median_over_launches_and_sizes_over_target(self):
        rows = [("c", "allgather", "blocking", "preload", i, b, 1, 1, r)
                for i, rs in enumerate([(1.00, 1.20), (1.02, 1.10), (5.00, 1.07)]) for b, r in zip((8, 64), rs)]
        line = line_of(summary(rows), "c", "allgather", "blocking", "preload")
        self.assertIn("| 1.100 (64) |", line)  # 64 B: median of 1.20, 1.10, 1.07; 8 B: 1.02
        self.assertIn("| 1 | 1.07-1.20 |", line)  # one size over 1.05; the worst size's launch spread

    def test_dropin_against_native_divides_the_medians(self):
        rows = [("c", "alltoall", "persistent", "preload", 0, 8, 1, 1, 0.5), ("c", "alltoall", "persistent", "native", 0, 8, 1, 1, 0.4),
                ("c", "alltoall", "persistent", "preload", 0, 16, 1, 1, 0.3), ("c", "alltoall", "persistent", "native", 0, 16, 1, 1, 0.6)]
        line = line_of(summary(rows).split("against the native API")[1], "c", "alltoall", "persistent")
        self.assertIn("| 1.250 (8) |", line)
        self.assertIn("| 1 | 1.25 0.50 |", line)

    def test_overhead_is_median_difference_up_to_64_bytes(self):
        rows = [("s", "allgather", "blocking", "direct", i, b, p + d, p, 1.0)
                for i, d in enumerate((0.10, 0.30, 0.12)) for b, p in ((1, 0.5), (64, 0.6), (128, 0.9))]
        rows += [("s", "allgather", "blocking", "direct", 3, 128, 9.0, 0.9, 10.0)]  # above 64 B: not counted
        line = [l for l in summary(rows).splitlines() if l.startswith("| allgather | blocking |")][0]
        self.assertIn("| +0.120 | +0.12 +0.12 | 0.1 |", line)


if __name__ == "__main__":
    unittest.main()
