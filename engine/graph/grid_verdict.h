// The grid construction's verdict sweep: after a grid construction (grid_setup.h) whose
// failure reached only some ranks, d more rounds spread the outcome to every rank.
//
// The construction's markers (backends/mpi/graph_setup.cc) only travel forward: a rank that
// fails after round k tells only the ranks sharing its coordinates in dimensions 0..k. In the
// sweep every rank sends, in round k (k = 0 .. d-1), each line peer of dimension k one word,
// the largest error class it knows of (0: none), and keeps the largest word it receives. A
// pass over every dimension is an all-reduce (MAX) along the grid's lines, so afterwards every
// rank holds the largest class any rank started with: every rank agrees, with
// sum(dims[k] - 1) one-word messages per rank and no global collective. A rank whose part of
// the construction failed still runs it (nothing here allocates: it runs after running out of
// memory); its peers wait for its words.
//
//   GridVerdict v(rank, dims, my_class);               // dims outlives v
//   for (; !v.done(); v.next()) {
//     for (int i = 0; i < v.peers(); ++i) send(v.peer(i), v.word());
//     for each (from, word) of the round's v.peers() messages: assert(v.take(from, word));  // else our bug
//   }
//   int agreed = v.verdict();                          // the same on every rank
#pragma once

#include <cstdint>
#include <vector>

namespace cartplan::engine::graph {

class GridVerdict {
 public:
  // `code`: this rank's error class after the construction (0: it has the pattern; never
  // negative); 0 <= rank < the product of dims.
  GridVerdict(int rank, const std::vector<int>& dims, int code);
  int round() const { return round_; }
  bool done() const { return round_ >= static_cast<int>(dims_->size()); }
  // This round's line peers (the ranks that differ from this one in coordinate `round` only):
  // peers() of them, peer(0) .. peer(peers() - 1) in increasing coordinate.
  int peers() const;
  int peer(int i) const;
  // What this rank sends each of them this round (fixed until next()).
  int word() const { return sent_; }
  // A word received this round: kept (the largest so far) if `from` is one of this round's
  // peers and the word a class (>= 0); false otherwise, and the word is ignored. Only our own
  // bug sends such a word (the MPI driver asserts): turning it into an error class here would
  // not help, since a class learned in round k reaches only the lines of rounds k+1 .. d-1.
  bool take(int from, int word);
  // To the next round, once this round's words are sent and its peers() words taken.
  void next();
  // The largest class any rank started with, once done() (every rank alike); 0: no failure.
  int verdict() const { return known_; }

 private:
  int stride() const;  // how far coordinate `round` steps in rank order (row-major)
  const std::vector<int>* dims_;
  int rank_;
  int round_ = 0;
  int known_;  // the largest class heard of so far
  int sent_;   // the word of this round: known_ when the round began
};

// Every rank's sweep in one process, round by round (the MPI-free harness of the tests):
// codes[r] is rank r's class before it; returns each rank's verdict, and in *messages (if not
// null) the one-word messages sent over all ranks.
std::vector<int> run_grid_verdicts(const std::vector<int>& dims, const std::vector<int>& codes, std::int64_t* messages = nullptr);

}  // namespace cartplan::engine::graph
