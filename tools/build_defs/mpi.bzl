"""What MPI targets add so that one BUILD file serves both MPI flavours (//third_party/mpi).

    cc_binary(name = "halo", srcs = [...], linkopts = MPI_PROGRAM_LINKOPTS,
              deps = ["//third_party/mpi", ...])
    cc_binary(name = "probe", ..., target_compatible_with = OPEN_MPI_ONLY)
"""

# An MPI program under SMPI is a shared object that smpirun dlopens once per simulated rank (SMPI
# 3.32's privatization of globals), as smpicxx links it: -shared, every symbol resolved at link
# time (-z defs). The Open MPI build links an ordinary executable.
MPI_PROGRAM_LINKOPTS = select({
    "//third_party/mpi:smpi": ["-shared", "-Wl,-z,defs"],
    "//conditions:default": [],
})

# For targets that need Open MPI (its drop-in through PMPI, mpi-ext.h, mpirun tests, Fortran):
# incompatible in the SMPI flavour, so bazel build --config=smpi //... skips them.
OPEN_MPI_ONLY = select({
    "//third_party/mpi:smpi": ["//third_party/mpi:open_mpi"],
    "//conditions:default": [],
})
