#!/usr/bin/env python3
"""Regenerates the halo plan corpus from the CLI: the golden plans (GOLDEN below, each the
output of `cartplan halo plan ARGS`) and the invalid variants the CLI corpus (cli.txt) expects
errors for. Run from the repository root after building //tools:cartplan:

    python3 tests/halo/corpus/make_plans.py bazel-bin/tools/cartplan
"""
import copy
import json
import subprocess
import sys

HERE = "tests/halo/corpus/plans/"

# name -> arguments of `cartplan halo plan` (tests/halo/cli_test.cc replays them).
GOLDEN = {
    "moore2_dimwise": "--interior 6,5 --ghost-lo 2,1 --ghost-hi 1,2 --stencil moore:d=2,r=1 --algo dimwise",
    "box3_auto": "--interior 8,8,8 --ghost 2 --stencil box:d=3,n=3,f=-1 --dims 4,4,4",
    "vonneumann2_direct": "--interior 5,4 --ghost 1,2 --stencil vonneumann:d=2,r=1 --algo direct --order F --elem 4",
    "moore2_combining": "--interior 4,4 --ghost 1 --algo combining",
    "corners3_split": "--interior 4,4,4 --ghost 1 --stencil offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1 --algo split",
    "corners3_hybrid": "--interior 4,4,4 --ghost 1 --stencil offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1 --algo hybrid",
}


def plan(cartplan, args):
    return subprocess.run([cartplan, "halo", "plan"] + args.split(), check=True, capture_output=True, text=True).stdout


def write(name, p):
    with open(HERE + name, "w") as f:
        json.dump(p, f, indent=1)
        f.write("\n")


def invalid_variants(good):
    """Each breaks the golden dimwise plan in one way (cli.txt names the expected error)."""
    # Phase 1's extended faces before the ghost rows of phase 0 they extend over.
    p = copy.deepcopy(good)
    p["phases"][0], p["phases"][1] = p["phases"][1], p["phases"][0]
    p["phases"][0]["dim"], p["phases"][1]["dim"] = 1, 0
    write("read_before_write.json", p)
    # The rows one further into the interior: the wrong cells.
    p = copy.deepcopy(good)
    p["phases"][0]["messages"][0]["parts"][0]["from"]["lo"][0] -= 1
    write("wrong_value.json", p)
    # Phase 0 again at the end: every ghost row written twice.
    p = copy.deepcopy(good)
    again = copy.deepcopy(p["phases"][0])
    for m in again["messages"]:
        m["tag"] += 100
    p["phases"].append(again)
    p["stats"]["messages"] += 2
    p["stats"]["phases"] += 1
    p["stats"]["wire_cells"] += sum(pt["extent"][0] * pt["extent"][1] for m in again["messages"] for pt in m["parts"])
    write("double_write.json", p)
    # The stencil without (-1,-1): its corner must not be written.
    p = copy.deepcopy(good)
    p["neighborhood"] = p["neighborhood"][1:]
    p["stats"]["ghost_cells"] -= 2 * 1
    write("extra_cell.json", p)
    # One part of phase 1 dropped: its corner is never written.
    p = copy.deepcopy(good)
    dropped = p["phases"][1]["messages"][1]["parts"].pop()
    p["stats"]["wire_cells"] -= dropped["extent"][0] * dropped["extent"][1]
    write("missing_cells.json", p)
    # Phase 1's first message as one part over the ghost rows and the interior: two origins.
    p = copy.deepcopy(good)
    parts = p["phases"][1]["messages"][0]["parts"]
    parts[0]["extent"][0] += parts[1]["extent"][0]
    del parts[1]
    write("mixed_origin.json", p)
    # A receive box that leaves the array.
    p = copy.deepcopy(good)
    p["phases"][0]["messages"][0]["parts"][0]["to"]["lo"][1] += 3
    write("outside.json", p)
    p = copy.deepcopy(good)
    p["stats"]["wire_cells"] += 1
    write("bad_stats.json", p)
    p = copy.deepcopy(good)
    p["phases"][0]["messages"][0]["parts"][0]["to"]["buf"] = "ghost"
    write("bad_buffer.json", p)
    p = copy.deepcopy(good)
    p["phases"][0]["messages"][0]["size"] = 3
    write("unknown_field.json", p)
    p = copy.deepcopy(good)
    p["neighborhood"][0] = [-2, -1]
    write("not_sign_vector.json", p)
    with open(HERE + "not_json.json", "w") as f:
        f.write('{"schema": "cartplan.halo_plan/1", "algorithm": }\n')


def main():
    cartplan = sys.argv[1]
    for name, args in GOLDEN.items():
        with open(HERE + name + ".json", "w") as f:
            f.write(plan(cartplan, args))
    with open(HERE + "moore2_dimwise.json") as f:
        invalid_variants(json.load(f))


if __name__ == "__main__":
    main()
