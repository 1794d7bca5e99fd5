#!/usr/bin/env python3
"""Regenerates the graph plan corpus from the CLI: the golden plans valid_pairing.json and
valid_grid.json and the invalid variants the CLI corpus (cli.txt) expects errors for. Run from the repository root
after building //tools:cartplan:

    python3 tests/graph/corpus/make_plans.py bazel-bin/tools/cartplan
"""
import copy
import json
import subprocess
import sys

HERE = "tests/graph/corpus/plans/"


def main():
    cartplan = sys.argv[1]
    text = subprocess.run([cartplan, "graph", "plan", "--graph", "file:tests/graph/corpus/graphs/tiny.txt",
                           "--op", "allgather", "--algo", "pairing", "--theta", "2"],
                          check=True, capture_output=True, text=True).stdout
    with open(HERE + "valid_pairing.json", "w") as f:
        f.write(text)
    plan = json.loads(text)

    def write(name, p):
        with open(HERE + name, "w") as f:
            json.dump(p, f, indent=1)
            f.write("\n")

    # Rank 2 receives rank 0's combined message; name another block in it.
    p = copy.deepcopy(plan)
    p["schedules"][2]["phases"][1]["recv"][0]["parts"][0]["block"] = [4]
    write("wrong_block.json", p)
    # Rank 4 forgets to receive the combined message from rank 1.
    p = copy.deepcopy(plan)
    p["schedules"][4]["phases"][1]["recv"] = []
    write("missing_recv.json", p)
    # Rank 0 forwards its partner's block in the exchange phase, while it arrives: both the
    # send (phase 1 -> 0) and the matching receive at rank 2 move.
    p = copy.deepcopy(plan)
    p["schedules"][0]["phases"][0]["send"].append(p["schedules"][0]["phases"][1]["send"].pop(0))
    p["schedules"][2]["phases"][0]["recv"].append(p["schedules"][2]["phases"][1]["recv"].pop(0))
    write("phase_hazard.json", p)
    # Rank 0 forwards its partner's block from a temp slot nothing ever writes.
    p = copy.deepcopy(plan)
    p["schedules"][0]["temps"].append([1])
    p["schedules"][0]["phases"][1]["send"][0]["parts"][1]["at"] = ["temp", 1]
    write("read_before_write.json", p)
    # Rank 3's partner block arrives twice: a second copy into the recv block it already holds.
    p = copy.deepcopy(plan)
    last = p["schedules"][1]["phases"][-1]
    last["copies"].append({"block": [1], "from": ["send", 0], "to": ["recv", 0]})
    write("double_write.json", p)
    p = copy.deepcopy(plan)
    p["schedules"][0]["phases"][0]["sends"] = []
    write("unknown_field.json", p)
    p = copy.deepcopy(plan)
    p["topology"][3]["in"] = [0]
    write("bad_topology.json", p)

    # The grid golden plan: the same graph routed through a 3x2 virtual grid (alltoall).
    grid_text = subprocess.run([cartplan, "graph", "plan", "--graph", "file:tests/graph/corpus/graphs/tiny.txt",
                                "--op", "alltoall", "--algo", "grid", "--grid-dims", "2"],
                               check=True, capture_output=True, text=True).stdout
    with open(HERE + "valid_grid.json", "w") as f:
        f.write(grid_text)
    grid = json.loads(grid_text)
    # A grid the ranks do not fill.
    p = copy.deepcopy(grid)
    p["dims"] = [2, 2]
    write("grid_wrong_dims.json", p)
    # Rank 0 drops its phase-0 message to rank 4, which carries (0->4#0) and (0->5#0) (4
    # forwards the second to 5 in phase 1): rank 4 then waits for a message nobody sends.
    p = copy.deepcopy(grid)
    p["schedules"][0]["phases"][0]["send"].pop()
    write("grid_lost_block.json", p)


if __name__ == "__main__":
    main()
