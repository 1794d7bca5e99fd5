"""Shared by the bench scripts' tests: where the `cartplan` CLI they run is, and a test case
with a cost-model file of its own."""
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def cartplan_binary():
    """tools/cartplan: under bazel test in the runfiles tree; by hand, in bazel-bin."""
    for root in (os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "")),
                 os.path.join(HERE, "..", "bazel-bin")):
        path = os.path.join(root, "tools", "cartplan")
        if os.path.isfile(path):
            return path
    raise RuntimeError("tools/cartplan not found (bazel build //tools:cartplan)")


class CliTestCase(unittest.TestCase):
    """A test of a script that runs `cartplan`: self.cartplan, and self.model, a cost-model file
    with the class's MODEL in a fresh directory self.dir."""
    MODEL = '{"schema": "cartplan.cost_model/1", "alpha_us": 1.0, "beta_us_per_byte": 0.001}'

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.model = os.path.join(self.dir, "model.json")
        with open(self.model, "w") as f:
            f.write(self.MODEL)
        self.cartplan = cartplan_binary()
