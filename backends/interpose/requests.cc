// Generalized requests for non-blocking collectives, self-message persistent requests, and
// the pump that drives cartplan's phases from MPI's completion calls.
#include "backends/interpose/requests.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "backends/interpose/guard.h"

namespace cartplan::interpose {
namespace {

struct Operation {
  std::unique_ptr<mpi::Exchange> x;
  MPI_Request handle = MPI_REQUEST_NULL;
  bool persistent = false;
  int tag = 0;           // persistent: the tag of its self message
  int error = MPI_SUCCESS;  // of the last completed start
};

std::vector<Operation*>& flying() {
  static std::vector<Operation*> v;
  return v;
}

std::unordered_map<MPI_Request, Operation*>& persistents() {
  static std::unordered_map<MPI_Request, Operation*> m;
  return m;
}

// Tags of the self messages: 0..32766 (the standard's least MPI_TAG_UB), reused after free.
struct Tags {
  std::vector<int> free;
  int next = 0;
};
Tags& tags() {
  static Tags t;
  return t;
}

// The private communicator of the self messages (created on first use, freed at MPI_Finalize).
MPI_Comm& self_slot() {
  static MPI_Comm c = MPI_COMM_NULL;
  return c;
}
MPI_Comm self_comm() {
  MPI_Comm& c = self_slot();
  if (c == MPI_COMM_NULL) PMPI_Comm_dup(MPI_COMM_SELF, &c);
  return c;
}

int query_fn(void* extra, MPI_Status* status) {
  auto* op = static_cast<Operation*>(extra);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = op->error;
  return op->error;
}

int free_fn(void* extra) {
  Inside inside;  // the exchange's destructor frees MPI objects
  delete static_cast<Operation*>(extra);
  return MPI_SUCCESS;
}

// A non-blocking collective cannot be cancelled (MPI-4, Sect. 6.12); nothing to do.
int cancel_fn(void*, int) { return MPI_SUCCESS; }

void signal(Operation* op) {
  if (op->persistent) PMPI_Send(nullptr, 0, MPI_BYTE, 0, op->tag, self_comm());
  else PMPI_Grequest_complete(op->handle);  // may run free_fn if the program freed it already
}

}  // namespace

bool in_flight() { return !flying().empty(); }
bool any_persistent() { return !persistents().empty(); }

void pump() {
  std::vector<Operation*>& list = flying();
  if (list.empty()) return;
  Inside inside;
  mpi::Exchange::progress_all();
  for (std::size_t i = 0; i < list.size();) {
    Operation* op = list[i];
    if (op->x->pending()) {
      ++i;
      continue;
    }
    const mpi::MpiStatus s = op->x->wait();  // finished: only marks it inactive and reports
    op->error = s.code;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    signal(op);
  }
}

int start_nonblocking(std::unique_ptr<mpi::Exchange> x, MPI_Request* request) {
  auto* op = new Operation;
  op->x = std::move(x);
  const int rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, op, request);
  if (rc != MPI_SUCCESS) {
    Inside inside;
    delete op;
    return rc;
  }
  op->handle = *request;
  {
    Inside inside;
    const mpi::MpiStatus s = op->x->start();
    if (!s.ok()) {
      op->error = s.code;
      signal(op);
      return MPI_SUCCESS;  // reported by the completion call, as MPI does for non-blocking calls
    }
  }
  flying().push_back(op);
  pump();
  return MPI_SUCCESS;
}

int make_persistent(std::unique_ptr<mpi::Exchange> x, MPI_Request* request) {
  Tags& t = tags();
  int tag = 0;
  if (!t.free.empty()) {
    tag = t.free.back();
    t.free.pop_back();
  } else if (t.next < 32767) {
    tag = t.next++;
  } else {
    return MPI_ERR_INTERN;  // 32767 persistent requests alive at once
  }
  MPI_Comm self = self_comm();
  const int rc = PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, tag, self, request);
  if (rc != MPI_SUCCESS) {
    t.free.push_back(tag);
    return rc;
  }
  auto* op = new Operation;
  op->x = std::move(x);
  op->persistent = true;
  op->tag = tag;
  op->handle = *request;
  persistents()[*request] = op;
  return MPI_SUCCESS;
}

bool is_persistent(MPI_Request request) {
  const auto& m = persistents();
  return !m.empty() && m.count(request);
}

int persistent_error(MPI_Request request) {
  const auto& m = persistents();
  if (m.empty()) return MPI_SUCCESS;
  auto it = m.find(request);
  return it == m.end() ? MPI_SUCCESS : it->second->error;
}

int start_persistent(MPI_Request* request) {
  Operation* op = persistents().at(*request);
  if (std::find(flying().begin(), flying().end(), op) != flying().end()) return MPI_ERR_REQUEST;  // already active
  const int rc = PMPI_Start(request);
  if (rc != MPI_SUCCESS) return rc;
  op->error = MPI_SUCCESS;
  {
    Inside inside;
    const mpi::MpiStatus s = op->x->start();
    if (!s.ok()) {
      op->error = s.code;
      signal(op);
      return MPI_SUCCESS;
    }
  }
  flying().push_back(op);
  pump();
  return MPI_SUCCESS;
}

int free_persistent(MPI_Request* request) {
  auto it = persistents().find(*request);
  Operation* op = it->second;
  // Freeing an active persistent collective is erroneous; finish it rather than leave peers waiting.
  while (std::find(flying().begin(), flying().end(), op) != flying().end()) pump();
  persistents().erase(it);
  tags().free.push_back(op->tag);
  {
    Inside inside;
    delete op;
  }
  return PMPI_Request_free(request);
}

void clear_requests() {
  Inside inside;
  while (in_flight()) pump();
  for (auto& [handle, op] : persistents()) {
    MPI_Request r = handle;
    PMPI_Request_free(&r);
    delete op;
  }
  persistents().clear();
  tags() = Tags{};
  MPI_Comm& self = self_slot();
  if (self != MPI_COMM_NULL) PMPI_Comm_free(&self);
}

}  // namespace cartplan::interpose
