"""mpi_test: an MPI program run under mpirun by run_mpi.sh with a time limit, tagged "mpi"."""

load("//tools/build_defs:mpi.bzl", "OPEN_MPI_ONLY")

def mpi_test(name, binary, np, args = [], data = [], size = "medium", limit = 240, tags = [], preload = None, env = {}):
    """One test: `binary` on `np` ranks, killed (and failed) after `limit` seconds.

    Args:
      name: the test's name.
      binary: the label of the MPI program.
      np: the number of ranks.
      args: more arguments for the program.
      data: more runfiles.
      size: the Bazel test size.
      limit: seconds before run_mpi.sh kills the job (a deadlock fails instead of hanging).
      tags: more tags; every MPI test is "mpi" and "exclusive" (one MPI job at a time on a
        2-core machine keeps timings sane).
      preload: the label of a shared library every rank preloads (LD_PRELOAD), or None.
      env: environment variables set for every rank.
    """
    options = []
    if preload:
        options = ["--preload", "$(location %s)" % preload]
        data = data + [preload]
    for var in sorted(env.keys()):
        options += ["--env", "%s=%s" % (var, env[var])]
    native.sh_test(
        name = name,
        size = size,
        srcs = ["run_mpi.sh"],
        args = options + [str(np), str(limit), "$(location %s)" % binary] + args,
        data = [binary] + data,
        tags = ["exclusive", "mpi"] + tags,
        # mpirun runs it: the SMPI flavour has its own test (tests/smpi).
        target_compatible_with = OPEN_MPI_ONLY,
    )
