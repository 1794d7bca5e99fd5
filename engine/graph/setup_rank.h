// RankBuilder: one rank's part of seed 003's distributed pattern construction (Alg. 1 with the
// friend matching of Alg. 2) as a state machine over messages. A driver delivers the messages
// addressed to the rank and sends the ones it emits; the rank advances whenever it holds every
// message its current step waits for, so the same logic runs in one process for all ranks
// (setup_run.h) or over MPI point-to-point messages at communicator creation. It never needs
// the whole graph: it talks to its in- and out-neighbours, and to its friends (ranks sharing
// at least theta out-neighbours), which it learns from its out-neighbours' in-lists.
//
// A rank plays two roles at once. As a sender it runs Alg. 1: build M from its out-neighbours'
// in-lists, find friends, pair (Alg. 2), split the common neighbours with the partner, notify
// its out-neighbours, repeat. As a receiver it follows its in-neighbours' notes to learn, per
// in-neighbour, in which phase which items arrive.
//
//   RankBuilder b(rank, out, in, options);
//   std::vector<SetupMessage> outbox = b.start();
//   while (!b.done()) outbox = b.step(deliver(outbox));   // messages addressed to this rank
//   RankPattern p = b.pattern();
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "engine/graph/pattern.h"
#include "engine/graph/setup_message.h"

namespace cartplan::engine::graph {

class RankBuilder {
 public:
  RankBuilder(int rank, const std::vector<int>& out, const std::vector<int>& in, PairingOptions options);

  // The first messages (this rank's in-list to its in-neighbours).
  std::vector<SetupMessage> start();
  // Takes the messages addressed to this rank (any order, any step), advances as far as they
  // allow and returns what it sends.
  std::vector<SetupMessage> step(std::vector<SetupMessage> inbox);
  bool done() const { return sender_ == SenderStep::kDone && receiver_done_; }
  // Valid once done().
  RankPattern pattern() const;

 private:
  enum class SenderStep { kWaitLists, kChoose, kWaitChoices, kWaitStates, kWaitHandover, kDone };

  // Sender role (Alg. 1 and 2).
  bool advance_sender(std::vector<SetupMessage>& out);
  bool take_lists(std::vector<SetupMessage>& out);
  void start_matching();
  void choose(std::vector<SetupMessage>& out);
  bool take_choices(std::vector<SetupMessage>& out);
  bool take_states(std::vector<SetupMessage>& out);
  void finish_matching(std::vector<SetupMessage>& out);
  bool take_handover(std::vector<SetupMessage>& out);
  void leave_loop(std::vector<SetupMessage>& out);
  int best_candidate() const;
  // Receiver role.
  bool advance_receiver(std::vector<SetupMessage>& out);
  void send_in_list(int iteration, std::vector<SetupMessage>& out) const;

  bool has(SetupKind kind, int iteration, int sub, int from) const;
  const SetupMessage& get(SetupKind kind, int iteration, int sub, int from) const;
  void drop(SetupKind kind, int iteration, int sub, int from);
  SetupMessage make(SetupKind kind, int to, int iteration, int sub = 0) const;

  const int rank_;
  const PairingOptions options_;
  std::unordered_map<std::uint64_t, SetupMessage> mailbox_;

  // Sender state.
  SenderStep sender_ = SenderStep::kWaitLists;
  int t_ = 0;                                // Alg. 1 iteration
  int sub_ = 0;                              // Alg. 2 sub-round
  std::map<int, std::vector<Item>> active_;  // Oa: active out-neighbour -> bundle carried to it
  std::map<int, std::vector<int>> rows_;     // M: active out-neighbour -> its active in-neighbours
  std::map<int, int> weight_;                // friend -> common active out-neighbours
  std::set<int> friends_active_;             // A: friends still matching (not paired, not terminal)
  std::set<int> candidates_;                 // friends not dropped by this rank's line 13
  std::map<int, int> chose_;                 // last sub-round: friend -> whom it chose
  int choice_ = -1, previous_choice_ = -1;
  bool paired_ = false, terminal_ = false;
  std::vector<int> on_, off_;                // this iteration's halves of the common neighbours
  RankPattern pattern_;

  // Receiver state.
  std::map<int, std::vector<Item>> incoming_;  // Ia: active in-neighbour -> the items it carries here
  int receiver_t_ = 0;
  bool receiver_done_ = false;
};

}  // namespace cartplan::engine::graph
