// The inflight tests' own point-to-point traffic beside cartplan's requests, and the
// rank-dependent way they complete those requests.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"

namespace cartplan::mpitest {

// Two messages per iteration to the next rank of `comm`: one with a tag cartplan's lanes use (on
// cartplan's private communicators), one with MPI_TAG_UB (what its set-up uses there). Received
// with MPI_ANY_SOURCE and MPI_ANY_TAG, so cartplan's traffic on the user's communicator would be
// taken instead.
//   UserTraffic user(comm);  user.send(iter);  ...  std::string f = user.receive(iter);
struct UserTraffic {
  MPI_Comm comm;
  int me = 0, p = 1, tag_ub = 32767;
  std::vector<int> buf[2];
  MPI_Request sends[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};

  explicit UserTraffic(MPI_Comm c) : comm(c) {
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &p);
    void* ub = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (flag) tag_ub = *static_cast<int*>(ub);
  }

  // Tags cartplan's own messages carry on its private communicators (lanes.h: round * 5121 + lane
  // with Open MPI's tag space; lane 0 blocking, 1-1024 persistent, 1025-5120 non-blocking).
  static constexpr int kTags[5] = {0, 1, 1025, 5120, 5121};
  int tag(int q, int iter) const { return q == 0 ? kTags[iter % 5] : tag_ub; }
  bool user_tag(int t) const {
    for (int k : kTags)
      if (t == k) return true;
    return t == tag_ub;
  }
  static int length(int q, int iter) { return 2 + q + iter % 3; }
  static int payload(int from, int q, int e, int iter) { return ((iter * 64 + from) * 2 + q) * 16 + e + 7; }
  int prev() const { return (me + p - 1) % p; }

  void send(int iter) {
    for (int q = 0; q < 2; ++q) {
      buf[q].assign(static_cast<std::size_t>(length(q, iter)), 0);
      for (int e = 0; e < length(q, iter); ++e) buf[q][e] = payload(me, q, e, iter);
      MPI_Isend(buf[q].data(), length(q, iter), MPI_INT, (me + 1) % p, tag(q, iter), comm, &sends[q]);
    }
  }
  // Both messages of the previous rank, in the order sent (non-overtaking), or what was wrong.
  std::string receive(int iter) const {
    for (int q = 0; q < 2; ++q) {
      std::vector<int> in(16, -1);
      MPI_Status st;
      MPI_Recv(in.data(), 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
      int n = -1;
      MPI_Get_count(&st, MPI_INT, &n);
      const std::string what = "user message " + std::to_string(q) + " of iteration " + std::to_string(iter);
      if (st.MPI_SOURCE != prev() || st.MPI_TAG != tag(q, iter) || n != length(q, iter))
        return what + ": source " + std::to_string(st.MPI_SOURCE) + " tag " + std::to_string(st.MPI_TAG) + " count " + std::to_string(n);
      for (int e = 0; e < 16; ++e)
        if (in[e] != (e < n ? payload(prev(), q, e, iter) : -1)) return what + ": element " + std::to_string(e);
    }
    return "";
  }
  // Whatever MPI_Iprobe finds on the communicator must be one of the previous rank's messages.
  std::string probe() const {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
    if (flag && (st.MPI_SOURCE != prev() || !user_tag(st.MPI_TAG)))
      return "MPI_Iprobe found a message that is not the user's: source " + std::to_string(st.MPI_SOURCE) + " tag " +
             std::to_string(st.MPI_TAG);
    return "";
  }
};

// Completes `reqs` in a pattern that depends on the rank and the iteration: waits in start
// order, waits last-started first, Cart_test polling from a rank-dependent first request (with
// the user's MPI_Iprobe between tests), or a sleep and Cart_waitall. Every third rank works a
// little first. False if a cartplan call failed; a wrong probe goes to *fail.
inline bool complete_in_rank_order(const UserTraffic& user, std::vector<Cart_Request*>& reqs, int iter, std::string* fail) {
  const int n = static_cast<int>(reqs.size()), me = user.me;
  bool ok = true;
  if (me % 3 == 0) usleep(200);
  const int mode = (me + iter) % 4;
  if (mode == 0 || mode == 1) {
    for (int i = 0; i < n; ++i) ok = Cart_wait(reqs[mode == 0 ? i : n - 1 - i]) == MPI_SUCCESS && ok;
  } else if (mode == 2) {
    std::vector<char> done(n, 0);
    for (int left = n, spin = 0; left > 0 && ok; ++spin)
      for (int i = 0; i < n && ok; ++i) {
        const int at = (i + me + iter) % n;
        int flag = 0;
        if (done[at]) continue;
        ok = Cart_test(reqs[at], &flag) == MPI_SUCCESS;
        if (flag) done[at] = 1, --left;
        if (spin % 8 == 0 && fail->empty()) *fail = user.probe();
      }
  } else {
    usleep(300);
    std::vector<Cart_Request> handles;
    for (Cart_Request* r : reqs) handles.push_back(*r);
    ok = Cart_waitall(n, handles.data()) == MPI_SUCCESS;
    for (int i = 0; i < n; ++i) *reqs[i] = handles[i];
  }
  return ok;
}

}  // namespace cartplan::mpitest
