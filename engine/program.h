// Program: what one rank does to run a bound plan, down to byte segments but without addresses.
// engine::lower() makes it (the layout rules live there); the MPI backend only turns each
// location into an address and datatype and each message into a send or receive, and the
// program simulator (backends/sim/program_sim.h) executes the same value for every rank.
//
// Memory has four kinds of location:
//  - the caller's send and recv blocks (their own layout: contiguous bytes or a datatype);
//  - the staging arena: plain bytes, `staging_bytes` long, holding packed messages and the
//    temp slots of alltoall/allgather plans;
//  - scratch blocks (reductions and rooted ops): `scratch_bytes.size()` blocks laid out like
//    one block of the call (its count and datatype), for temp slots, recv blocks that are not the
//    caller's, and staged receives that are combined after the phase.
//
//   Result<Program> p = engine::lower(plan, bound, layout);
//   for (const PhaseProgram& ph : p->phases) {
//     run(ph.before);  post(ph.messages);  wait();  run(ph.after);
//   }
//   run(p->final_steps);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace cartplan::engine {

struct Loc {
  enum class Kind { kSend, kRecv, kStaging, kScratch };
  Kind kind = Kind::kSend;
  int index = 0;             // kSend / kRecv: the caller's block; kScratch: the scratch block
  std::int64_t offset = 0;   // kStaging: byte offset in the arena (0 otherwise)
  std::int64_t bytes = 0;    // bytes of data at this location
  bool contiguous = true;    // the bytes are adjacent in memory (kStaging always)
  friend bool operator==(const Loc&, const Loc&) = default;
};

// A local step: `from` is copied to `to` (a memcpy when both are contiguous, else a datatype
// copy), or, with `combine`, reduced into `to` with the collective's op.
struct Step {
  Loc from, to;
  bool combine = false;
  friend bool operator==(const Step&, const Step&) = default;
};

// One message: the parts in wire order. One part is sent from / received into that location
// in its own layout; several parts are one struct datatype over all of them.
struct Message {
  bool recv = false;
  int peer = -1;     // rank in the grid
  int tag = 0;       // the round's tag in the plan (a backend maps it into its tag space)
  int phase = 0, round = 0;  // where it comes from, for error messages
  std::vector<Loc> parts;
  std::int64_t bytes = 0;
  // The last part is a trailer: one staging byte that carries no data, only there so that the
  // message is not one run of memory (LowerOptions::trailer_min_bytes). Nothing writes it
  // before a send, and nothing reads it after a receive.
  bool trailer = false;
  friend bool operator==(const Message&, const Message&) = default;
};

struct PhaseProgram {
  std::vector<Step> before;       // at the phase's start: packing, rounds to the rank itself
  std::vector<Message> messages;  // receives first, then sends
  std::vector<Step> after;        // once every message completed: unpacking, combines, phase copies
  friend bool operator==(const PhaseProgram&, const PhaseProgram&) = default;
};

struct Program {
  ir::Op op = ir::Op::kAlltoall;
  int rank = 0;
  std::vector<PhaseProgram> phases;
  std::vector<Step> final_steps;  // the plan's copies, after the last phase
  std::int64_t staging_bytes = 0;
  std::vector<std::int64_t> scratch_bytes;  // per scratch block
  friend bool operator==(const Program&, const Program&) = default;
};

// What a program costs locally: messages and their bytes, and the bytes it copies itself.
struct ProgramCounts {
  std::int64_t messages = 0;       // sends and receives
  std::int64_t sent_bytes = 0;
  std::int64_t received_bytes = 0;
  std::int64_t copied_bytes = 0;    // bytes moved by non-combining steps (packing, self rounds, copies)
  std::int64_t combined_bytes = 0;  // bytes reduced into a location
  std::int64_t struct_messages = 0; // messages with several parts (a struct datatype)
  friend bool operator==(const ProgramCounts&, const ProgramCounts&) = default;
};
ProgramCounts count(const Program& program);

}  // namespace cartplan::engine
