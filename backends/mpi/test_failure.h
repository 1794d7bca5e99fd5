// Failure injection for tests: CARTPLAN_TEST_FAIL names set-up steps that fail on the ranks
// where it is set, so that tests can show a failure on one rank only is agreed (every rank
// returns an error or passes through alike) instead of hanging or diverging. Read at those
// one-time set-up steps only, never on a per-call path. Programs leave it unset.
//
//   CARTPLAN_TEST_FAIL=pricing   GraphComm's agreed price table (graph auto, the drop-in's graph verdicts)
//   CARTPLAN_TEST_FAIL=prepare   the drop-in's graph state of a duplicate (MPI_Comm_dup / idup)
//   CARTPLAN_TEST_FAIL=pattern   GraphComm's pattern construction (after its messages)
//   CARTPLAN_TEST_FAIL=pattern-pairing, pattern-cumulative, pattern-grid   that algorithm's construction only
//   CARTPLAN_TEST_FAIL=prebuilt-linear, prebuilt-pairing, prebuilt-cumulative, prebuilt-grid   a
//     persistent auto init's exchange of that table row, made before the pick (graph_collective.cc)
//   CARTPLAN_TEST_FAIL=late-linear, late-pairing, late-cumulative, late-grid   a persistent auto
//     init's exchange of the picked row whenever it is built after the pick, not taken from the
//     rows made before it: a row some rank had not made (over its temp budget), and every
//     persistent auto init that made no rows (its communicator's table agreed by an earlier call)
//   CARTPLAN_TEST_FAIL=measure-trials   measuring mode's trial builds (scratch and exchanges, before
//     the trials' agreement) run out of memory: std::bad_alloc (collectives and halo exchanges)
//   CARTPLAN_TEST_FAIL=measure-rebuild   a measuring init's build of the exchange it keeps, on the
//     caller's buffers after the trials, runs out of memory: std::bad_alloc (collectives, halo)
//   CARTPLAN_TEST_FAIL=plan-after-agreement   a persistent Cartesian init's planning after its
//     first agreement runs out of memory: std::bad_alloc (exchange_settle.cc)
//   CARTPLAN_TEST_FAIL=create-check   Cart_neighborhood_create's argument checks (before its
//     agreement) run out of memory: std::bad_alloc (neighborhood_comm.cc)
//   CARTPLAN_TEST_FAIL=graph-buffers   a persistent graph init's block layout (before its
//     agreement) runs out of memory: std::bad_alloc (graph_collective.cc)
//   CARTPLAN_TEST_FAIL=halo-plan   a halo's planning runs out of memory: std::bad_alloc in
//     Cart_halo_create's planning and where a halo plans for a new element size (halo.cc)
//   CARTPLAN_TEST_FAIL=halo-create-local   Cart_halo_create's local steps (the halo's parts, before
//     its agreement) run out of memory: std::bad_alloc (halo.cc)
//   CARTPLAN_TEST_FAIL=halo-init-build   a persistent halo init's build of the model's pick (before
//     its agreement) runs out of memory: std::bad_alloc (halo.cc)
//   CARTPLAN_TEST_FAIL=create-local   Cart_neighborhood_create's state (before the description's
//     agreement) runs out of memory: std::bad_alloc (neighborhood_comm.cc)
//   CARTPLAN_TEST_FAIL=grid-construct, grid-construct-partway   a graph grid construction runs out
//     of memory before its first round / between its first two: std::bad_alloc (graph_setup.cc)
//   CARTPLAN_TEST_FAIL=grid-sweep-room   the room for a grid's verdict sweep (its sends' requests,
//     the room to record its outcome) runs out of memory, before the sweep: std::bad_alloc
//     (graph_comm.cc; that rank then sweeps without requests and keeps a bare verdict)
//   CARTPLAN_TEST_FAIL=grid-record-room   the room to record a grid construction's outcome runs
//     out of memory, before the construction: std::bad_alloc (graph_comm.cc; that rank still
//     constructs, keeps its class in a pending bare verdict and sweeps at its next spread call)
//   CARTPLAN_TEST_FAIL=grid-verdict-copy   copying a kept grid failure's text after the sweep runs
//     out of memory: std::bad_alloc (graph_comm.cc; the agreed class is returned without it)
//   CARTPLAN_TEST_FAIL=measure-trial-run   a measuring trial's exchange fails after its messages:
//     MPI_ERR_OTHER (measure_trials.cc)
//   (several: comma-separated)
//
//   if (s.ok() && test_failure("pricing")) s = injected_failure("pricing");
//   inject_out_of_memory("measure-trials");  // inside the step whose bad_alloc is caught
#pragma once

#include <string_view>

#include "backends/mpi/status.h"

namespace cartplan::mpi {

// Whether CARTPLAN_TEST_FAIL on this rank names `step` (read at every call).
bool test_failure(std::string_view step);

// The error an injected failure of `step` returns: MPI_ERR_OTHER, naming the variable.
MpiStatus injected_failure(std::string_view step);

// Throws std::bad_alloc when CARTPLAN_TEST_FAIL on this rank names `step`: running out of
// memory where a build would, so that the code which catches it is what the test exercises.
void inject_out_of_memory(std::string_view step);

}  // namespace cartplan::mpi
