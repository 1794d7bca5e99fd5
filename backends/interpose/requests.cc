// Requests of non-blocking collectives (Open MPI's own kind, or generalized requests), persistent
// requests (Open MPI's own kind, or self messages), and how exchanges signal them when they finish.
#include "backends/interpose/requests.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/interpose/guard.h"
#include "backends/interpose/openmpi_request.h"

namespace cartplan::interpose {
namespace {

// A request's exchange: a Cartesian one (x) or a graph one (g).
struct Operation {
  std::unique_ptr<mpi::Exchange> x;
  std::unique_ptr<mpi::GraphExchange> g;
  MPI_Request handle = MPI_REQUEST_NULL;
  bool persistent = false;
  bool own_kind = false;              // non-blocking of Open MPI's own kind (else a generalized request)
  bool self_message = false;          // persistent with a self message (else Open MPI's own kind)
  int tag = 0;                        // self message: its tag
  std::atomic<int> error{MPI_SUCCESS};  // of the last completed start
  std::atomic<bool> active{false};      // started and not yet signalled
  mpi::MpiStatus start() { return x ? x->start() : g->start(); }
  mpi::MpiStatus wait() { return x ? x->wait() : g->wait(); }
  MPI_Comm error_comm() const { return x ? x->error_comm() : g->error_comm(); }
};

bool openmpi_kind();


// Persistent requests by handle, and the tags of their self messages: 0..32766 (the standard's
// least MPI_TAG_UB), reused after free. Under MPI_THREAD_MULTIPLE threads start and free their
// requests concurrently: one mutex, taken only then. Also the fallback's generalized requests not
// yet released, which clear_requests (MPI_Finalize) frees if the program never did: with that
// kind every non-blocking call takes the mutex (under MPI_THREAD_MULTIPLE) and inserts into the
// set (new_request), and its release erases it (discard). Open MPI's own kind of non-blocking
// request never touches this (cartplan_openmpi_nonblocking_reclaim walks its free list instead).
struct Persistents {
  std::mutex mu;
  std::unordered_map<MPI_Request, Operation*> ops;
  std::vector<int> free_tags;
  int next_tag = 0;
  std::unordered_set<Operation*> generalized;
};
Persistents& persistents() {
  static Persistents p;
  return p;
}

class Locked {
 public:
  Locked() : lock_(persistents().mu, std::defer_lock) {
    if (mpi::thread_multiple()) lock_.lock();
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// Keeps persistent_failures: the completion calls look requests up only while some failed.
void set_error(Operation* op, int error) {
  const int before = op->error.exchange(error);
  if (!op->persistent || (before == MPI_SUCCESS) == (error == MPI_SUCCESS)) return;
  persistent_failures.fetch_add(error == MPI_SUCCESS ? -1 : 1, std::memory_order_relaxed);
}

// The private communicator of the self messages (created on first use, freed at MPI_Finalize).
MPI_Comm& self_slot() {
  static MPI_Comm c = MPI_COMM_NULL;
  return c;
}
MPI_Comm self_comm() {
  static std::once_flag once;
  std::call_once(once, [] { PMPI_Comm_dup(MPI_COMM_SELF, &self_slot()); });
  return self_slot();
}

int query_fn(void* extra, MPI_Status* status) {
  auto* op = static_cast<Operation*>(extra);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = 0;  // as the other kind (openmpi_request.h: undefined in MPI, 0 from libnbc in practice)
  status->MPI_TAG = 0;
  status->MPI_ERROR = op->error;
  return op->error;
}

// MPI releases a non-blocking request (completed and freed, in either order): the exchange goes
// back to its communicator's pool, where the next call with the same arguments finds it
// (Exchange::recycle). The release function of both kinds.
void discard(void* ctx) {
  Inside inside;
  auto* op = static_cast<Operation*>(ctx);
  if (!op->own_kind) {
    Locked lock;
    persistents().generalized.erase(op);
  }
  if (op->x) mpi::Exchange::recycle(std::move(op->x));
  delete op;
}
int free_fn(void* extra) {
  discard(extra);
  return MPI_SUCCESS;
}

// A non-blocking collective cannot be cancelled (MPI-4, Sect. 6.12); nothing to do.
int cancel_fn(void*, int) { return MPI_SUCCESS; }

// The exchange's finish callback: records its outcome and completes the MPI request. Runs in a
// cartplan call or inside Open MPI's progress engine: nothing here blocks.
void finished(void* ctx) {
  Inside inside;
  auto* op = static_cast<Operation*>(ctx);
  const int error = op->wait().code;  // the exchange has finished: this only takes its outcome
  set_error(op, error);
  op->active = false;
  flying.fetch_sub(1, std::memory_order_relaxed);
  if (op->own_kind) {
    cartplan_openmpi_nonblocking_complete(op->handle, error);  // may release op (freed already)
  } else if (op->self_message) {
    MPI_Request r = MPI_REQUEST_NULL;
    PMPI_Isend(nullptr, 0, MPI_BYTE, 0, op->tag, self_comm(), &r);
    PMPI_Request_free(&r);
  } else if (op->persistent) {
    cartplan_openmpi_request_complete(op->handle);  // the program may free it from here on
  } else {
    PMPI_Grequest_complete(op->handle);  // may run free_fn (the program freed it already): op is gone
  }
}

// Starts op's exchange; its finish callback signals the request, possibly before this returns.
// MPI_ERR_REQUEST if op is active; if the exchange refuses to start (it only does when already
// active; other errors are reported by its finish), op is left inactive and out of `flying`,
// which clear_requests (MPI_Finalize) waits to reach 0.
int launch(Operation* op) {
  if (op->active.exchange(true)) return MPI_ERR_REQUEST;
  set_error(op, MPI_SUCCESS);
  flying.fetch_add(1, std::memory_order_relaxed);
  Inside inside;
  const mpi::MpiStatus s = op->start();
  if (s.ok()) return MPI_SUCCESS;
  op->active = false;
  flying.fetch_sub(1, std::memory_order_relaxed);
  return s.code;
}

// The exchange signals `op` when it finishes (finished, above).
void watch(Operation* op) {
  if (op->x) op->x->on_finish(finished, op);
  else op->g->on_finish(finished, op);
}

Operation* find_persistent(MPI_Request request) {
  Persistents& p = persistents();
  Locked lock;
  auto it = p.ops.find(request);
  return it == p.ops.end() ? nullptr : it->second;
}

Operation* operation_of(std::unique_ptr<mpi::Exchange> x) {
  auto* op = new Operation;
  op->x = std::move(x);
  return op;
}

Operation* operation_of(std::unique_ptr<mpi::GraphExchange> x) {
  auto* op = new Operation;
  op->g = std::move(x);
  return op;
}

// A new request for op, Open MPI's own kind or a generalized request (then remembered until
// discard). Where it fails, op is deleted.
int new_request(Operation* op, MPI_Comm comm, MPI_Request* request) {
  op->own_kind = openmpi_kind();
  const int rc = op->own_kind ? cartplan_openmpi_nonblocking_create(discard, op, comm, request)
                              : PMPI_Grequest_start(query_fn, free_fn, cancel_fn, op, request);
  if (rc != MPI_SUCCESS) {
    Inside inside;
    delete op;
    return rc;
  }
  op->handle = *request;
  if (!op->own_kind) {
    Locked lock;
    persistents().generalized.insert(op);
  }
  return MPI_SUCCESS;
}

// The request of a non-blocking collective: Open MPI's own kind where its layout is trusted
// (openmpi_kind, below; no generalized request's query and free callbacks on completion), else
// a generalized request. Either is completed by the exchange's finish callback (finished).
int issue_nonblocking(Operation* op, MPI_Request* request) {
  const int rc = new_request(op, op->error_comm(), request);
  if (rc != MPI_SUCCESS) return rc;
  watch(op);
  const int started = launch(op);  // a new exchange: only fails if something is badly wrong
  if (started == MPI_SUCCESS) return MPI_SUCCESS;
  op->error = started;  // in the status on completion (query_fn for a generalized request)
  if (op->own_kind) cartplan_openmpi_nonblocking_complete(op->handle, started);
  else PMPI_Grequest_complete(op->handle);
  return MPI_SUCCESS;
}

// A request that completes at once with `error` in its status, of the kind issue_nonblocking
// gives, holding no exchange.
int issue_failed(int error, MPI_Comm comm, MPI_Request* request) {
  auto* op = new Operation;
  op->error = error;
  const int rc = new_request(op, comm, request);
  if (rc != MPI_SUCCESS) return rc;
  if (op->own_kind) cartplan_openmpi_nonblocking_complete(op->handle, error);
  else PMPI_Grequest_complete(op->handle);
  return MPI_SUCCESS;
}

// Which kind of request: Open MPI's own (openmpi_request.h: no message per persistent start, no
// generalized request's callbacks per non-blocking call) where its layout is trusted, else a
// self message (persistent) and a generalized request (non-blocking).
// CARTPLAN_INTERPOSE_REQUESTS=self-message forces the fallbacks (tests of them, measurements
// side by side).
// Any other value is ignored, with a warning from rank 0. Self-message also switches off the
// phase probe (phase_probe, below).
bool openmpi_kind() {
  static const bool yes = [] {
    const char* v = std::getenv("CARTPLAN_INTERPOSE_REQUESTS");
    const bool self = v && std::strcmp(v, "self-message") == 0;
    int initialized = 0, rank = -1;
    if (v && !self && PMPI_Initialized(&initialized) == MPI_SUCCESS && initialized) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "cartplan: CARTPLAN_INTERPOSE_REQUESTS=%s ignored (known: self-message)\n", v);
    return !self && cartplan_openmpi_request_usable() == 1;
  }();
  return yes;
}

// The progress callback's cheaper test of a phase (Exchange::set_phase_probe): Open MPI's
// requests' completion flags, where the layout is trusted (openmpi_kind); else "maybe
// complete", and the phase is tested with MPI_Testall as everywhere.
bool phase_probe(int n, const MPI_Request* requests) {
  return !openmpi_kind() || cartplan_openmpi_requests_complete(n, requests) != 0;
}
// Installed when the library is loaded, before any exchange exists; it calls no MPI function.
const bool phase_probe_installed = [] {
  mpi::Exchange::set_phase_probe(phase_probe);
  return true;
}();

// Ends a persistent request of ours (MPI_Request_free, MPI_Finalize): the handle is released by
// the caller (or by Open MPI, whose free function this is for its own kind).
void release(Operation* op) {
  {
    // Freeing an active persistent collective is erroneous; finish it rather than leave peers waiting.
    Inside inside;
    if (op->active) op->wait();  // its finish callback completes the request
  }
  {
    Locked lock;
    Persistents& p = persistents();
    p.ops.erase(op->handle);
    if (op->self_message) p.free_tags.push_back(op->tag);
  }
  if (op->self_message) self_message_count.fetch_sub(1, std::memory_order_relaxed);
  persistent_count.fetch_sub(1, std::memory_order_relaxed);
  set_error(op, MPI_SUCCESS);
  Inside inside;
  delete op;
}

// Open MPI's own kind: MPI_Start (whoever calls it) and MPI_Request_free run these.
int start_openmpi_kind(void* ctx) { return launch(static_cast<Operation*>(ctx)); }
void release_openmpi_kind(void* ctx) { release(static_cast<Operation*>(ctx)); }

// The self message: a persistent zero-byte receive from this process on a private communicator,
// with a tag of its own (started by start_if_self_message, completed by finished's send).
int self_message_request(Operation* op, MPI_Request* request) {
  Persistents& p = persistents();
  int tag = 0;
  {
    Locked lock;
    if (!p.free_tags.empty()) {
      tag = p.free_tags.back();
      p.free_tags.pop_back();
    } else if (p.next_tag < 32767) {
      tag = p.next_tag++;
    } else {
      return MPI_ERR_INTERN;  // 32767 persistent requests alive at once
    }
  }
  const int rc = PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, tag, self_comm(), request);
  if (rc != MPI_SUCCESS) {
    Locked lock;
    p.free_tags.push_back(tag);
    return rc;
  }
  op->self_message = true;
  op->tag = tag;
  self_message_count.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int register_persistent(Operation* op, MPI_Request* request) {
  const int rc = openmpi_kind() ? cartplan_openmpi_request_create(start_openmpi_kind, release_openmpi_kind, op, request)
                                : self_message_request(op, request);
  if (rc != MPI_SUCCESS) {
    Inside inside;
    delete op;
    return rc;
  }
  op->persistent = true;
  op->handle = *request;
  watch(op);
  persistent_count.fetch_add(1, std::memory_order_relaxed);
  Locked lock;
  persistents().ops[*request] = op;
  return MPI_SUCCESS;
}

}  // namespace

int start_nonblocking(std::unique_ptr<mpi::Exchange> x, MPI_Request* request) {
  return issue_nonblocking(operation_of(std::move(x)), request);
}

int start_nonblocking(std::unique_ptr<mpi::GraphExchange> x, MPI_Request* request) {
  return issue_nonblocking(operation_of(std::move(x)), request);
}

int fail_nonblocking(int error, MPI_Comm comm, MPI_Request* request) { return issue_failed(error, comm, request); }

int make_persistent(std::unique_ptr<mpi::Exchange> x, MPI_Request* request) {
  return register_persistent(operation_of(std::move(x)), request);
}

int make_persistent(std::unique_ptr<mpi::GraphExchange> x, MPI_Request* request) {
  return register_persistent(operation_of(std::move(x)), request);
}


void pump() {
  if (!in_flight()) return;
  Inside inside;
  mpi::Exchange::progress_all();
}

bool is_persistent_of_ours(MPI_Request request) {
  if (!any_persistent()) return false;
  return openmpi_kind() ? cartplan_openmpi_request_is_ours(request) != 0 : is_self_message(request);
}

bool is_self_message(MPI_Request request) {
  if (!any_self_message()) return false;
  Operation* op = find_persistent(request);
  return op && op->self_message;
}

bool active_self_message(MPI_Request request) {
  if (!any_self_message()) return false;
  Operation* op = find_persistent(request);
  return op && op->self_message && op->active;
}

int persistent_error(MPI_Request request) {
  if (!any_persistent_failed()) return MPI_SUCCESS;
  Operation* op = find_persistent(request);
  return op ? op->error.load() : MPI_SUCCESS;
}

bool start_if_self_message(MPI_Request* request, int* rc) {
  Operation* op = any_self_message() ? find_persistent(*request) : nullptr;
  if (!op || !op->self_message) return false;
  if (op->active) {  // already active: refused as Open MPI's MPI_Startall refuses it (openmpi_request.c)
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
    *rc = MPI_ERR_REQUEST;
    return true;
  }
  *rc = PMPI_Start(request);
  if (*rc != MPI_SUCCESS) return true;
  *rc = launch(op);
  if (*rc != MPI_SUCCESS) {  // nothing started: the self receive goes, the request is inactive
    PMPI_Cancel(request);
    PMPI_Wait(request, MPI_STATUS_IGNORE);
  }
  return true;
}

int free_self_message(MPI_Request* request) {
  release(find_persistent(*request));
  return PMPI_Request_free(request);
}

// Non-blocking requests the program never freed (erroneous: MPI wants every request completed
// or freed before MPI_Finalize), once nothing is in flight: freed as MPI_Request_free would, so
// that the exchanges they hold are released and a leak check sees nothing of cartplan's.
void reclaim_nonblocking() {
  cartplan_openmpi_nonblocking_reclaim();  // nothing if Open MPI's own kind was never set up
  std::vector<MPI_Request> handles;
  {
    Locked lock;
    for (Operation* op : persistents().generalized) handles.push_back(op->handle);
  }
  for (MPI_Request r : handles) PMPI_Request_free(&r);  // complete: its free_fn discards op
}

int unreleased_requests() {
  int n = cartplan_openmpi_nonblocking_held();
  std::lock_guard<std::mutex> lock(persistents().mu);  // not Locked: it may ask MPI, maybe finalized
  return n + static_cast<int>(persistents().generalized.size() + persistents().ops.size());
}

// `flying` drops in `finished` before the request is completed to MPI (the completion follows
// in the same callback, possibly on another thread): "nothing in flight" here means every
// request is complete only if no other thread is inside MPI at MPI_Finalize (a program whose
// threads still call MPI then is erroneous; nothing here guards against it).
void clear_requests() {
  Inside inside;
  while (in_flight()) mpi::Exchange::progress_all();
  reclaim_nonblocking();
  std::vector<MPI_Request> handles;
  for (const auto& entry : persistents().ops) handles.push_back(entry.first);
  for (MPI_Request r : handles) {
    Operation* op = find_persistent(r);
    if (op->self_message) release(op);
    PMPI_Request_free(&r);  // Open MPI's own kind: its free function releases op
  }
  Persistents& p = persistents();
  p.free_tags.clear();
  p.next_tag = 0;
  self_message_count = 0;
  persistent_count = 0;
  persistent_failures = 0;
  MPI_Comm& self = self_slot();
  if (self != MPI_COMM_NULL) PMPI_Comm_free(&self);
}

}  // namespace cartplan::interpose
