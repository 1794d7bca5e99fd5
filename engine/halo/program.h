// HaloProgram: what one rank does to run a bound halo plan, in the terms an MPI backend needs
// to build one subarray datatype per region and one persistent request per transfer, with no
// copies by cartplan (docs/halo.md). Per phase: the transfers to receive (first) and to send,
// one per peer, each a list of regions of the array or of a temp in wire order. A region is a
// box given as MPI_Type_create_subarray wants it: `start` and `extent` per dimension, 0-based
// in the buffer (array: interior coordinates + ghost_lo), with the buffer's sizes and the
// array's order; a transfer of several regions is one struct datatype over them. Temps are
// scratch arrays of `temp_extents[s]` elements in the array's order, allocated once.
//
// Messages to the same peer in one phase are one transfer (tag: the first one's, in plan
// order); parts that touch in both sender and receiver buffers are joined into one region.
// Both sides do this from the same kept parts, so their wire orders match. A transfer whose
// peer is the rank itself (a periodic dimension of size 1) is a local copy in effect.
// Receives are listed by peer rank; sends by their first message's shift (lexicographic), the
// same relative order on every rank, also where a torus wraps (the linear loop's order for the
// direct plan; issues 30 and 33: under SMPI peer-rank order made the direct plan slower).
//
// Running it: for each phase, start every receive and send of the phase, wait for all of them;
// then the next phase (its sends read ghost cells the earlier phases received).
//
//   Result<HaloProgram> p = lower_halo(binder, grid, grid.coords(rank));
//   for (const HaloPhaseProgram& ph : p->phases) { post(ph.recvs); post(ph.sends); wait_all(); }
#pragma once

#include <cstdint>
#include <vector>

#include "engine/grid.h"
#include "engine/halo/bind.h"
#include "ir/halo/array.h"
#include "ir/result.h"

namespace cartplan::engine::halo {

struct HaloRegion {
  static constexpr int kArray = -1;
  int buffer = kArray;  // kArray, or a temp slot
  std::vector<int> start;   // 0-based in the buffer
  std::vector<int> extent;
  std::int64_t cells() const;
  friend bool operator==(const HaloRegion&, const HaloRegion&) = default;
};

struct HaloTransfer {
  int peer = kNoRank;
  int tag = 0;
  std::vector<HaloRegion> regions;  // wire order
  std::int64_t cells = 0;
  friend bool operator==(const HaloTransfer&, const HaloTransfer&) = default;
};

struct HaloPhaseProgram {
  std::vector<HaloTransfer> recvs;
  std::vector<HaloTransfer> sends;
  friend bool operator==(const HaloPhaseProgram&, const HaloPhaseProgram&) = default;
};

struct HaloProgram {
  int rank = 0;
  ir::halo::ArrayShape array;                 // sizes: array.extent(k); order; element bytes
  std::vector<std::vector<int>> temp_extents;  // per temp slot
  std::vector<HaloPhaseProgram> phases;        // phases with nothing to do on this rank are empty
  friend bool operator==(const HaloProgram&, const HaloProgram&) = default;
};

// The program of the rank at `coords`.
Result<HaloProgram> lower_halo(const HaloBinder& binder, const Grid& grid, const Coords& coords);

// What a program moves: transfers to other ranks and to itself, and their bytes.
struct HaloCounts {
  std::int64_t sends = 0, recvs = 0;            // transfers to / from other ranks
  std::int64_t self_transfers = 0;              // sends to the rank itself
  std::int64_t sent_bytes = 0, received_bytes = 0;  // with other ranks
  std::int64_t self_bytes = 0;
  std::int64_t regions = 0;                     // regions of all sends (datatype pieces)
  int phases = 0;                               // phases with a transfer to another rank
  friend bool operator==(const HaloCounts&, const HaloCounts&) = default;
};
HaloCounts count(const HaloProgram& program);

}  // namespace cartplan::engine::halo
