#!/usr/bin/env bash
# Consumers of an installed cartplan, built outside Bazel, and the code blocks of README.md and
# docs/*.md: installs into a temporary prefix and runs README's install block as written (C with
# pkg-config, C++ with CMake, Fortran with mpif90), checks that README's C program and C++ form
# are docs/examples/quickstart.c{,c}, runs every marked command block of README and docs/ (the markers:
# docs/testing.md, "Documentation that runs"), plus a static C link (pkg-config --static and
# CMake), the exported-symbol and SONAME checks, a gcc -Wall -Werror compile of the header and a
# Fortran test of the module's request arrays, plan/program text and large-count forms, one of
# its graph collectives and one of mpi_f08's MPI_BOTTOM and MPI_IN_PLACE passed to it. Every binary runs under mpirun on 4 ranks with the same Open MPI
# settings and time limit as tests/mpi/run_mpi.sh.
# Then the SMPI install (install.sh --smpi): C and C++ programs built with smpicc/smpicxx and
# pkg-config cartplan-smpi run under smpirun on a generated platform, and cartplan-calibrate
# fits a model there that cartplan --cost-model reads.
# One line per check: "consumer <name>: OK" or "consumer <name>: FAILED (...)"; exit 1 on any failure.
#
#   bash tests/consumers/run.sh            # from anywhere; needs setup.sh's packages
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

work="$(mktemp -d "${TMPDIR:-/tmp}/cartplan-consumers.XXXXXX")"
trap 'rm -rf "$work" "$root/out"' EXIT
prefix="$work/prefix"
status=0
ok() { echo "consumer $1: OK"; }
fail() { echo "consumer $1: FAILED ($2)"; status=1; }

# Open MPI in this sandbox (see tests/mpi/run_mpi.sh): shared memory only, private session dir.
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none PMIX_MCA_gds=hash
mkdir -p "$work/ompi"
export OMPI_MCA_orte_tmpdir_base="$work/ompi"
run4() { timeout --signal=KILL 120 mpirun --oversubscribe --allow-run-as-root -np 4 "$@"; }

# The fenced code blocks of a markdown file marked for CI: each "<!-- ci: KIND -->" or
# "<!-- ci: KIND (note) -->" line right before a fence. Prints the blocks' lines, concatenated.
ci_blocks() {
  awk -v kind="$1" '
    b && /^```$/ { b = 0; next }
    b { print; next }
    m { m = 0; if (/^```/) { b = 1; next } }
    $0 == "<!-- ci: " kind " -->" || index($0, "<!-- ci: " kind " (") == 1 { m = 1 }
  ' "$2"
}

# 1. README's install block, as written, with PREFIX set to the temporary prefix (its first line).
block="$work/readme_block.sh"
ci_blocks install README.md >"$block"
if [ ! -s "$block" ] || ! grep -q '^PREFIX=' "$block"; then
  fail readme_block "README.md has no <!-- ci: install --> sh block starting with PREFIX="
else
  sed -i "s|^PREFIX=.*|PREFIX='$prefix'|" "$block"
  # mpirun in the block gets the time limit of the other MPI runs.
  real_mpirun="$(command -v mpirun)"
  # shellcheck disable=SC1090
  (mpirun() { timeout --signal=KILL 120 "$real_mpirun" "$@"; }; set -e; source "$block") >"$work/readme.log" 2>&1
  rc=$?
  # One line per consumer: each example prints "<name>: OK" when all its checks pass.
  for pair in c_pkgconfig:quickstart cpp_cmake:halo_cpp fortran_f08:halo_f08; do
    if grep -q "^${pair#*:}: OK" "$work/readme.log"; then ok "${pair%%:*}"; else fail "${pair%%:*}" "README block exit $rc; see below"; fi
  done
  if [ "$rc" -ne 0 ] || [ "$(grep -cE '^(quickstart|halo_cpp|halo_f08): OK' "$work/readme.log")" -ne 3 ]; then tail -n 30 "$work/readme.log"; fi
fi
[ -f "$prefix/lib/pkgconfig/cartplan.pc" ] || { echo "consumers: nothing installed; stopping" >&2; exit 1; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

# 2. README's C program and C++ form are the example files CI builds and runs: the C program in
#    the install block above, the C++ program (built there by CMake) here.
ci_blocks c-program README.md >"$work/readme_c_program.c"
if [ -s "$work/readme_c_program.c" ] && diff -u docs/examples/quickstart.c "$work/readme_c_program.c" >"$work/c_program.diff"; then
  ok readme_c_program
else
  fail readme_c_program "README's <!-- ci: c-program --> block differs from docs/examples/quickstart.c"; head -n 20 "$work/c_program.diff"
fi
ci_blocks cpp-fragment README.md >"$work/readme_cpp.txt"
sed -n '/\/\/ README: begin$/,/\/\/ README: end$/p' docs/examples/quickstart.cc | sed '1d;$d' | sed 's/^    //' >"$work/quickstart_cpp.txt"
if [ -s "$work/readme_cpp.txt" ] && diff -u "$work/quickstart_cpp.txt" "$work/readme_cpp.txt" >"$work/cpp.diff"; then
  ok readme_cpp_form
else
  fail readme_cpp_form "README's <!-- ci: cpp-fragment --> block differs from docs/examples/quickstart.cc between its README markers"
  head -n 20 "$work/cpp.diff"
fi
if [ -x out/cmake/quickstart_cpp ] && run4 out/cmake/quickstart_cpp >"$work/quickstart_cpp.log" 2>&1 &&
   grep -q '^quickstart_cpp: OK' "$work/quickstart_cpp.log"; then
  ok cpp_quickstart
else
  fail cpp_quickstart "out/cmake/quickstart_cpp missing or failed"; tail -n 20 "$work/quickstart_cpp.log" 2>/dev/null
fi
# The graph collectives' and Halo::iexchange's C++ forms, linked against the installed library
# (its exported symbols: backends/dist/cartplan.map).
if [ -x out/cmake/graph_cpp ] && run4 out/cmake/graph_cpp >"$work/graph_cpp.log" 2>&1 && grep -q '^graph_cpp: OK' "$work/graph_cpp.log"; then
  ok cpp_graph
else
  fail cpp_graph "out/cmake/graph_cpp missing or failed"; tail -n 20 "$work/graph_cpp.log" 2>/dev/null
fi

# 3. The command blocks of README and docs/, as written, from the repository root with the
#    cartplan CLI on PATH (README's block builds it; their p.json is removed).
export PATH="$root/bazel-bin/tools:$PATH"
for doc in README.md docs/*.md; do
  cli="$work/cli_$(basename "$doc" .md).sh"
  ci_blocks cli "$doc" >"$cli"
  [ -s "$cli" ] || continue
  name="cli_$(basename "$doc" .md)"
  # A shell of its own: errexit is ignored inside an if condition of this one.
  if bash -e "$cli" >"$work/$name.log" 2>&1; then
    ok "$name"
  else
    fail "$name" "a command of $doc failed"; tail -n 20 "$work/$name.log"
  fi
done
rm -f p.json
[ -s "$work/cli_README.sh" ] || fail cli_README "README.md has no <!-- ci: cli --> block"

# 4. Plans shown in docs/ parse strictly and verify; C calls shown in README and docs/ compile
#    against the installed header (as the body of a function that declares what they use).
for doc in README.md docs/*.md; do
  ci_blocks plan-json "$doc" >"$work/plan.json"
  if [ -s "$work/plan.json" ]; then
    name="plan_json_$(basename "$doc" .md)"
    if "$root/bazel-bin/tools/cartplan" verify - <"$work/plan.json" >"$work/$name.log" 2>&1; then ok "$name"; else fail "$name" "$(head -n 3 "$work/$name.log")"; fi
  fi
  ci_blocks c-calls "$doc" >"$work/calls.inc"
  if [ -s "$work/calls.inc" ]; then
    name="c_calls_$(basename "$doc" .md)"
    { echo '#include <cartplan/cartplan_mpi.h>'
      echo 'void calls(const void* sendbuf, void* recvbuf, void* buffer, int count, MPI_Datatype type, MPI_Op op, int root,'
      echo '           int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, MPI_Comm cart);'
      echo 'void calls(const void* sendbuf, void* recvbuf, void* buffer, int count, MPI_Datatype type, MPI_Op op, int root,'
      echo '           int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, MPI_Comm cart) {'
      cat "$work/calls.inc"
      echo '}'; } >"$work/$name.c"
    if mpicc -std=c11 -Wall -Werror -c "$work/$name.c" $(pkg-config --cflags cartplan) -o "$work/$name.o" 2>"$work/$name.log"; then
      ok "$name"
    else
      fail "$name" "$(head -n 3 "$work/$name.log")"
    fi
  fi
done

# 5. The installed shared library: SONAME, and nothing exported beyond the public API.
version=$(sed -n 's/^CARTPLAN_VERSION = "\(.*\)"$/\1/p' tools/build_defs/version.bzl)
soversion=$(sed -n 's/^CARTPLAN_SOVERSION = "\(.*\)"$/\1/p' tools/build_defs/version.bzl)
so="$prefix/lib/libcartplan.so.$version"
soname=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" = "libcartplan.so.$soversion" ] && [ "$(readlink "$prefix/lib/libcartplan.so")" = "libcartplan.so.$soversion" ]; then
  ok soname
else
  fail soname "SONAME '$soname', expected libcartplan.so.$soversion"
fi
# Only global and weak definitions (upper-case nm types) are exported; lower-case ones are local
# entries the linker keeps in .dynsym for initial-exec TLS relocations (hot_tls.h), not bindable.
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sed 's/@.*//' | c++filt)
stray=$(echo "$exported" | grep -vE '^(Cart_|cartplan_f_|cartplan::mpi::(CartComm|Collective|DistGraphComm|GraphCollective|Halo|HaloRequest)::|CARTPLAN_)' || true)
if [ -z "$stray" ] && echo "$exported" | grep -q '^Cart_type_create_triangle$'; then
  ok exported_symbols
else
  fail exported_symbols "non-public symbols exported: $(echo "$stray" | head -n 5 | tr '\n' ' ')"
fi

# 6. The header under gcc -Wall -Wextra -Werror -pedantic: MPI_UNWEIGHTED as the weights argument.
cat >"$work/header.c" <<'C'
#include <cartplan/cartplan_mpi.h>
int create(MPI_Comm* cart) {
  int dims[2] = {2, 2}, periods[2] = {1, 0}, offsets[4] = {1, 0, 0, 1};
  return Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, cart);
}
C
if mpicc -std=c11 -Wall -Wextra -Werror -pedantic -c "$work/header.c" $(pkg-config --cflags cartplan) -o "$work/header.o" 2>"$work/header.log"; then
  ok header_wall
else
  fail header_wall "$(head -n 3 "$work/header.log")"
fi

# 7. C against the static library (pkg-config --static brings the C++ runtime): no libcartplan.so at run time.
if mpicc -Wall -Werror docs/examples/halo_c.c $(pkg-config --static --cflags --libs cartplan | sed 's/-lcartplan\b/-l:libcartplan.a/') \
     -o "$work/halo_c_static" 2>"$work/static.log"; then
  if ldd "$work/halo_c_static" | grep -q libcartplan; then
    fail c_static "linked libcartplan.so instead of libcartplan.a"
  elif run4 "$work/halo_c_static" >"$work/static_run.log" 2>&1 && grep -q 'halo_c: OK' "$work/static_run.log"; then
    ok c_static
  else
    fail c_static "run failed"; tail -n 20 "$work/static_run.log"
  fi
else
  fail c_static "link failed"; tail -n 20 "$work/static.log"
fi

# 8. CMake's static target (cartplan::cartplan_static) from the same consumer project.
if [ -x out/cmake/halo_c_static ] && run4 out/cmake/halo_c_static >"$work/cmake_static.log" 2>&1 &&
   grep -q 'halo_c: OK' "$work/cmake_static.log"; then
  ok cmake_c_static
else
  fail cmake_c_static "out/cmake/halo_c_static missing or failed"; tail -n 20 "$work/cmake_static.log" 2>/dev/null
fi

# Builds a consumer program with the compiler command given (source and flags; the output file
# is appended), runs it on 4 ranks and expects its line "NAME: OK". One line: "consumer CHECK: ...".
build_and_run() {
  local check=$1 name=$2
  shift 2
  if ! "$@" -o "$work/$name" 2>"$work/${name}_build.log"; then
    fail "$check" "build failed"; tail -n 20 "$work/${name}_build.log"
  elif run4 "$work/$name" >"$work/$name.log" 2>&1 && grep -q "^$name: OK" "$work/$name.log"; then
    ok "$check"
  else
    fail "$check" "run failed"; tail -n 20 "$work/$name.log"
  fi
}

# 9. Fortran: request arrays (Cart_startall/waitall/testall), Cart_request_plan/program text and
#    the large-count _c forms of the cartplan_f08 module (tests/consumers/requests_f08.f90).
build_and_run fortran_requests requests_f08 mpif90 tests/consumers/requests_f08.f90 $(pkg-config --cflags --libs cartplan-f08)

# 9a. C: the halo API (docs/examples/halo_api.c), every cell checked after blocking and persistent exchanges.
build_and_run c_halo_api halo_api mpicc -std=c11 -Wall -Werror docs/examples/halo_api.c $(pkg-config --cflags --libs cartplan)

# 9b. Fortran: the halo API of the cartplan_f08 module (tests/consumers/halo_api_f08.f90): every
#     cell of a Fortran-order array (uneven interiors) checked after blocking, non-blocking and
#     persistent exchanges, the plan a
#     persistent request runs (Cart_halo_request_plan) against the C function's, and the _fields
#     forms on a real64 and an integer array together (every cell of both) and their bad input
#     (null address, MPI_DATATYPE_NULL, count 0, count larger than the arrays passed).
build_and_run fortran_halo halo_api_f08 mpif90 tests/consumers/halo_api_f08.f90 $(pkg-config --cflags --libs cartplan-f08)

# 9c. Fortran: the graph collectives of the cartplan_f08 module (tests/consumers/graph_f08.f90):
#     blocking, non-blocking and persistent allgather[v] and alltoall[v|w], int and large-count
#     _c forms, on an irregular graph under linear, grid, pairing and cumulative, every element
#     against mpi_f08's MPI_Neighbor_*.
build_and_run fortran_graph graph_f08 mpif90 tests/consumers/graph_f08.f90 $(pkg-config --cflags --libs cartplan-f08)

# 9d. Fortran: mpi_f08's MPI_BOTTOM and MPI_IN_PLACE through the cartplan_f08 module
#     (tests/consumers/sentinels_f08.f90): graph and Cartesian alltoallw, blocking, _c and
#     persistent, on MPI_BOTTOM with MPI_Get_address displacements, every element against
#     MPI_Neighbor_alltoallw on MPI_BOTTOM; MPI_IN_PLACE to neighbourhood collectives is
#     MPI_ERR_ARG, MPI_BOTTOM and MPI_IN_PLACE as a halo array MPI_ERR_BUFFER.
build_and_run fortran_sentinels sentinels_f08 mpif90 tests/consumers/sentinels_f08.f90 $(pkg-config --cflags --libs cartplan-f08)

# 8. The SMPI install (docs/smpi.md): README's C and C++ examples built with smpicc / smpicxx and
#    pkg-config cartplan-smpi, run under smpirun on the installed generator's torus, one rank per
#    node (every message crosses the simulated network); cartplan-calibrate fits a model there
#    (a short run: one neighbourhood, two sizes) that the inspector and the library read.
sprefix="$work/smpi-prefix"
smpi_run() { timeout --signal=KILL 300 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning "$@"; }
if bash install.sh --smpi "$sprefix" >"$work/smpi_install.log" 2>&1 && [ -f "$sprefix/lib/pkgconfig/cartplan-smpi.pc" ]; then
  ok smpi_install
  spc() { PKG_CONFIG_PATH="$sprefix/lib/pkgconfig" pkg-config "$@" cartplan-smpi; }
  python3 "$sprefix/share/cartplan/smpi/platforms.py" torus --np 64 --out-dir "$work/smpi" >/dev/null
  printf 'n0\nn1\nn2\nn3\n' >"$work/smpi/one_per_node.hosts"
  for pair in c:halo_c.c:smpicc cpp:halo_cpp.cc:smpicxx; do
    IFS=: read -r lang src cc <<<"$pair"
    std=$([ "$lang" = cpp ] && echo -std=c++20 || echo -std=c11)
    if $cc $std -Wall -Werror "docs/examples/$src" $(spc --cflags --libs) -o "$work/smpi/halo_$lang" 2>"$work/smpi_$lang.log" &&
       smpi_run -np 4 -platform "$work/smpi/torus_p64.xml" -hostfile "$work/smpi/one_per_node.hosts" "$work/smpi/halo_$lang" \
         >>"$work/smpi_$lang.log" 2>&1 && grep -q "^halo_$lang: OK" "$work/smpi_$lang.log"; then
      ok "smpi_$lang"
    else
      fail "smpi_$lang" "build or run failed"; tail -n 20 "$work/smpi_$lang.log"
    fi
  done
  if smpi_run -np 4 -platform "$work/smpi/torus_p64.xml" -hostfile "$work/smpi/one_per_node.hosts" "$sprefix/bin/cartplan-calibrate" \
       --specs 'box:d=2,n=3,f=-1' --sizes 1,4096 --out "$work/smpi/model.json" >"$work/smpi_calibrate.log" 2>&1 &&
     "$sprefix/bin/cartplan" plan --op alltoall --stencil box:d=2,n=3,f=-1 --cost-model "$work/smpi/model.json" --explain \
       >>"$work/smpi_calibrate.log" 2>&1 && grep -q '"mpi": "SimGrid SMPI' "$work/smpi/model.json" &&
     CARTPLAN_COST_MODEL="$work/smpi/model.json" smpi_run -np 4 -platform "$work/smpi/torus_p64.xml" \
       -hostfile "$work/smpi/one_per_node.hosts" "$work/smpi/halo_c" >>"$work/smpi_calibrate.log" 2>&1; then
    ok smpi_calibrate
  else
    fail smpi_calibrate "cartplan-calibrate, the inspector or the calibrated run failed"; tail -n 20 "$work/smpi_calibrate.log"
  fi
else
  fail smpi_install "install.sh --smpi failed"; tail -n 20 "$work/smpi_install.log"
fi

exit "$status"
