// MPI test of the halo API (Cart_halo_*): 2-D and 3-D tori, meshes and mixed grids, ghost
// widths 0-3 with asymmetric sides, C and Fortran order, several element types, every
// algorithm forced and auto, on plain MPI_Cart_create communicators (Moore, or a stencil from
// Info cartplan_stencil) and cartplan communicators. Interior cells hold rank-, cell-, byte-
// and iteration-dependent values, ghost cells a position-dependent sentinel that no value
// equals; after each exchange every cell of the array is checked: a ghost cell whose sign
// vector is in the stencil and whose source process exists holds that process's cell
// x - sign * interior, every other cell is unchanged. Blocking, persistent (started many times
// with changing data), several fields, two halos in flight with rank-dependent completion, and
// bad input with the expected error classes.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A halo case: the grid, the array and how the exchange is asked for.
struct Case {
  int d = 2;
  std::vector<int> periods;
  std::vector<int> interior, lo, hi;
  // An uneven decomposition: the global interior, cut into blocks over the grid (the first
  // global % dims blocks one cell more); run_case then sets `interior` to this rank's block.
  std::vector<int> global;
  MPI_Datatype type = MPI_DOUBLE;
  const char* type_name = "double";
  int order = MPI_ORDER_C;
  const char* algo = "auto";
  // Measuring mode (Info cartplan_tune = measure): at persistent init, or for the whole halo
  // from Cart_halo_create.
  enum class Tune { kModel, kAtInit, kAtCreate } tune = Tune::kModel;
  // Where the stencil comes from: "" = a plain communicator's default (every region),
  // "info:SPEC" = plain communicator with cartplan_stencil, "cart:x,y;..." = a cartplan
  // communicator with these offsets.
  std::string stencil;
  std::string name() const {
    std::string s = std::to_string(d) + "-D algo " + algo + " type " + type_name + (order == MPI_ORDER_C ? " C" : " F") + " periods";
    for (int p : periods) s += std::to_string(p);
    s += " lo";
    for (int v : lo) s += std::to_string(v);
    s += " hi";
    for (int v : hi) s += std::to_string(v);
    if (!global.empty()) s += " global";
    for (int v : global) s += " " + std::to_string(v);
    s += tune == Tune::kAtInit ? " tune measure at init" : tune == Tune::kAtCreate ? " tune measure at creation" : "";
    return s + " stencil '" + stencil + "'";
  }
};

std::vector<std::vector<int>> parse_offsets(const std::string& text, int d) {
  std::vector<std::vector<int>> out;
  std::vector<int> cur;
  std::string num;
  auto flush = [&] {
    if (!num.empty()) cur.push_back(std::atoi(num.c_str()));
    num.clear();
  };
  for (char c : text + ";") {
    if (c == ',') flush();
    else if (c == ';') {
      flush();
      if (static_cast<int>(cur.size()) == d) out.push_back(cur);
      cur.clear();
    } else num += c;
  }
  return out;
}

// Block c of `global` cells cut into `parts` blocks.
int block_extent(int global, int parts, int c) { return global / parts + (c < global % parts ? 1 : 0); }

// This rank's interior: the case's, or its block of the case's global interior.
std::vector<int> interior_here(const Case& c, MPI_Comm cart) {
  if (c.global.empty()) return c.interior;
  std::vector<int> dims(c.d), periods(c.d), coords(c.d), n;
  MPI_Cart_get(cart, c.d, dims.data(), periods.data(), coords.data());
  for (int k = 0; k < c.d; ++k) n.push_back(block_extent(c.global[k], dims[k], coords[k]));
  return n;
}

// The line of `"key": ` in a plan's JSON.
std::string json_field(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  return at == std::string::npos ? "" : json.substr(at, json.find('\n', at) - at);
}

// The process grid, the array geometry and the expected values of one case on this rank.
class Layout {
 public:
  Layout(const Case& c, MPI_Comm cart, std::set<std::vector<int>> stencil, int salt)
      : c_(c), cart_(cart), stencil_(std::move(stencil)), salt_(salt) {
    MPI_Aint lb = 0;
    MPI_Type_get_extent(c.type, &lb, &esize_);
    dims_.assign(c.d, 0);
    std::vector<int> per(c.d);
    coords_.assign(c.d, 0);
    MPI_Cart_get(cart, c.d, dims_.data(), per.data(), coords_.data());
    MPI_Comm_rank(cart, &rank_);
    cells_ = 1;
    for (int k = 0; k < c.d; ++k) {
      ext_.push_back(c.lo[k] + c.interior[k] + c.hi[k]);
      cells_ *= ext_[k];
    }
  }
  std::size_t bytes() const { return static_cast<std::size_t>(cells_ * esize_); }

  // Interior values of (rank, interior cell, byte) below 0x80; sentinels at or above.
  unsigned char value(int rank, const std::vector<int>& x, int b) const {
    std::uint32_t h = 2166136261u ^ static_cast<std::uint32_t>(rank * 7919 + salt_ * 104729);
    for (int v : x) h = (h ^ static_cast<std::uint32_t>(v + 1000)) * 16777619u;
    h = (h ^ static_cast<std::uint32_t>(b)) * 16777619u;
    return static_cast<unsigned char>((h >> 7) & 0x7f);
  }
  unsigned char sentinel(const std::vector<int>& a, int b) const {
    std::uint32_t h = 0x9e3779b9u ^ static_cast<std::uint32_t>(rank_);
    for (int v : a) h = (h ^ static_cast<std::uint32_t>(v)) * 16777619u;
    return static_cast<unsigned char>(0x80 | ((h + static_cast<std::uint32_t>(b)) & 0x7f));
  }

  void fill(std::vector<unsigned char>& arr) const {
    arr.assign(bytes(), 0);
    for_each([&](const std::vector<int>& a, const std::vector<int>& x, bool inside, std::size_t at) {
      for (int b = 0; b < esize_; ++b) arr[at + b] = inside ? value(rank_, x, b) : sentinel(a, b);
    });
  }

  // Every cell against what it must hold; counts mismatching cells.
  long check(const std::vector<unsigned char>& arr, std::string* first) const {
    long bad = 0;
    for_each([&](const std::vector<int>& a, const std::vector<int>& x, bool inside, std::size_t at) {
      int src = -1;
      std::vector<int> sx = x;
      if (!inside) src = source(x, &sx);
      for (int b = 0; b < esize_; ++b) {
        const unsigned char want = inside ? value(rank_, x, b) : src >= 0 ? value(src, sx, b) : sentinel(a, b);
        if (arr[at + b] == want) continue;
        if (bad++ == 0) {
          *first = "cell (";
          for (int v : x) *first += std::to_string(v) + " ";
          *first += ") byte " + std::to_string(b) + ": " + std::to_string(arr[at + b]) + ", expected " + std::to_string(want) +
                    (inside ? " (interior)" : src >= 0 ? " (from rank " + std::to_string(src) + ")" : " (untouched)");
        }
        break;
      }
    });
    return bad;
  }

 private:
  // The rank whose cell fills ghost cell x, and that cell, or -1. Above the interior the
  // source cell is x - this rank's extent; below it, x + the source rank's (they differ in an
  // uneven decomposition).
  int source(const std::vector<int>& x, std::vector<int>* sx) const {
    std::vector<int> s(c_.d), nc(c_.d);
    for (int k = 0; k < c_.d; ++k) {
      s[k] = x[k] < 0 ? -1 : x[k] >= c_.interior[k] ? 1 : 0;
      nc[k] = coords_[k] + s[k];
      if (nc[k] < 0 || nc[k] >= dims_[k]) {
        if (!c_.periods[k]) return -1;
        nc[k] = (nc[k] + dims_[k]) % dims_[k];
      }
      const int source_extent = c_.global.empty() ? c_.interior[k] : block_extent(c_.global[k], dims_[k], nc[k]);
      (*sx)[k] = s[k] > 0 ? x[k] - c_.interior[k] : s[k] < 0 ? x[k] + source_extent : x[k];
    }
    if (!stencil_.count(s)) return -1;
    int r = -1;
    MPI_Cart_rank(cart_, nc.data(), &r);
    return r;
  }

  template <class F>
  void for_each(F&& f) const {
    std::vector<int> a(c_.d, 0), x(c_.d);
    for (long i = 0; i < cells_; ++i) {
      bool inside = true;
      long at = 0;
      for (int k = 0; k < c_.d; ++k) {
        x[k] = a[k] - c_.lo[k];
        inside = inside && x[k] >= 0 && x[k] < c_.interior[k];
      }
      if (c_.order == MPI_ORDER_C) {
        for (int k = 0; k < c_.d; ++k) at = at * ext_[k] + a[k];
      } else {
        for (int k = c_.d - 1; k >= 0; --k) at = at * ext_[k] + a[k];
      }
      f(a, x, inside, static_cast<std::size_t>(at * esize_));
      for (int k = c_.d - 1; k >= 0 && ++a[k] == ext_[k]; --k) a[k] = 0;
    }
  }

  const Case& c_;
  MPI_Comm cart_;
  std::set<std::vector<int>> stencil_;
  int salt_ = 0;
  MPI_Aint esize_ = 0;
  std::vector<int> dims_, coords_, ext_;
  int rank_ = 0;
  long cells_ = 1;
};

std::set<std::vector<int>> moore(int d) {
  std::set<std::vector<int>> s;
  std::vector<int> t(d, -1);
  for (;;) {
    bool zero = true;
    for (int v : t) zero = zero && v == 0;
    if (!zero) s.insert(t);
    int k = d - 1;
    while (k >= 0 && t[k] == 1) t[k--] = -1;
    if (k < 0) return s;
    ++t[k];
  }
}

// The communicator of a case and the sign vectors its halo fills.
MPI_Comm open_comm(Harness& h, const Case& c, std::set<std::vector<int>>* stencil) {
  std::vector<int> dims(c.d, 0);
  MPI_Dims_create(h.size, c.d, dims.data());
  MPI_Comm cart = MPI_COMM_NULL;
  if (c.stencil.rfind("cart:", 0) == 0) {
    const std::vector<std::vector<int>> offs = parse_offsets(c.stencil.substr(5), c.d);
    std::vector<int> flat;
    for (const auto& o : offs) {
      flat.insert(flat.end(), o.begin(), o.end());
      bool sign = true, zero = true;
      for (int v : o) sign = sign && v >= -1 && v <= 1, zero = zero && v == 0;
      if (sign && !zero) stencil->insert(o);
    }
    h.check(Cart_neighborhood_create(MPI_COMM_WORLD, c.d, dims.data(), c.periods.data(), static_cast<int>(offs.size()),
                                     flat.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart) == MPI_SUCCESS,
            c.name() + ": Cart_neighborhood_create");
    return cart;
  }
  MPI_Cart_create(MPI_COMM_WORLD, c.d, dims.data(), c.periods.data(), 0, &cart);
  if (c.stencil.rfind("info:offsets:", 0) == 0) {
    for (const auto& o : parse_offsets(c.stencil.substr(13), c.d)) stencil->insert(o);
  } else {
    *stencil = moore(c.d);
  }
  return cart;
}

Cart_Halo open_halo(Harness& h, const Case& c, MPI_Comm cart) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", c.algo);
  if (c.stencil.rfind("info:", 0) == 0) MPI_Info_set(info, "cartplan_stencil", c.stencil.substr(5).c_str());
  if (c.tune == Case::Tune::kAtCreate) MPI_Info_set(info, "cartplan_tune", "measure");
  Cart_Halo halo = CART_HALO_NULL;
  const int rc = Cart_halo_create(cart, c.d, c.interior.data(), c.lo.data(), c.hi.data(), c.type, c.order, info, &halo);
  MPI_Info_free(&info);
  h.check(rc == MPI_SUCCESS, c.name() + ": Cart_halo_create: " + Cart_error_message());
  if (rc != MPI_SUCCESS) return CART_HALO_NULL;
  if (std::string(c.algo) != "auto") {
    char* json = nullptr;
    h.check(Cart_halo_plan(halo, &json) == MPI_SUCCESS, c.name() + ": Cart_halo_plan");
    h.check(json && contains(json, std::string("\"algorithm\": \"") + c.algo + "\""), c.name() + ": the plan runs the forced algorithm");
    Cart_free_plan_json(json);
  }
  return halo;
}

// The Info of a case's persistent init: cartplan_tune = measure, or none.
MPI_Info init_info(const Case& c) {
  if (c.tune != Case::Tune::kAtInit) return MPI_INFO_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_tune", "measure");
  return info;
}

// Whether every rank of comm holds the same text (collective; compares FNV-1a hashes).
bool same_on_every_rank(const std::string& text, MPI_Comm comm) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char ch : text) hash = (hash ^ ch) * 1099511628211ull;
  std::uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&hash, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&hash, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
  return lo == hi;
}

// The plan a persistent request runs (Cart_halo_request_plan) is the same on every rank and,
// for auto, one of the planner's candidates: the plan of a halo with that algorithm forced.
void expect_candidate_plan(Harness& h, const Case& c, MPI_Comm cart, Cart_Request req) {
  char* json = nullptr;
  h.check(Cart_halo_request_plan(req, &json) == MPI_SUCCESS && json, c.name() + ": Cart_halo_request_plan: " + Cart_error_message());
  const std::string mine = json ? json : "";
  Cart_free_plan_json(json);
  // An uneven decomposition's plans differ in the interior; every rank runs one algorithm in one order.
  const std::string kind = c.global.empty() ? mine : json_field(mine, "algorithm") + json_field(mine, "dim_order");
  h.check(same_on_every_rank(kind, cart), c.name() + ": ranks run different plans");
  std::string own = "\"interior\": [";
  for (int k = 0; k < c.d; ++k) own += (k ? ", " : "") + std::to_string(c.interior[k]);
  h.check(json_field(mine, "interior").rfind(own + "]", 0) == 0, c.name() + ": the plan is not of this rank's interior: " + json_field(mine, "interior"));
  if (std::string(c.algo) != "auto") return;
  bool found = false;
  for (const char* algo : {"direct", "combining", "dimwise", "split", "hybrid"}) {
    Case forced = c;
    forced.algo = algo;
    forced.tune = Case::Tune::kModel;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algo);
    if (c.stencil.rfind("info:", 0) == 0) MPI_Info_set(info, "cartplan_stencil", c.stencil.substr(5).c_str());
    Cart_Halo halo = CART_HALO_NULL;
    // Dimwise refuses stencils that are not prefix-closed (on every rank alike): not a candidate.
    if (Cart_halo_create(cart, c.d, c.interior.data(), c.lo.data(), c.hi.data(), c.type, c.order, info, &halo) == MPI_SUCCESS) {
      char* text = nullptr;
      Cart_halo_plan(halo, &text);
      found = found || (text && mine == text);
      Cart_free_plan_json(text);
      Cart_halo_free(&halo);
    }
    MPI_Info_free(&info);
  }
  h.check(found, c.name() + ": the persistent request runs none of the planner's candidates: " + mine.substr(0, 200));
}

void expect_cells(Harness& h, const Layout& l, const std::vector<unsigned char>& arr, const std::string& what) {
  std::string first;
  const long bad = l.check(arr, &first);
  h.check(bad == 0, what + ": " + std::to_string(bad) + " wrong cell(s), first " + first);
}

// Fields of three element types (the case's, short, and a 3-int struct) in one set of
// messages, blocking and persistent.
void mixed_fields(Harness& h, const Case& c, MPI_Comm cart, const std::set<std::vector<int>>& stencil, Cart_Halo halo) {
  static MPI_Datatype triple = MPI_DATATYPE_NULL;
  if (triple == MPI_DATATYPE_NULL) {
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
  }
  std::vector<Case> kinds(3, c);
  kinds[1].type = MPI_SHORT;
  kinds[2].type = triple;
  std::vector<MPI_Datatype> types = {kinds[0].type, kinds[1].type, kinds[2].type};
  std::vector<std::vector<unsigned char>> fields(3);
  std::vector<void*> ptrs;
  for (int f = 0; f < 3; ++f) ptrs.push_back((fields[f] = std::vector<unsigned char>(Layout(kinds[f], cart, stencil, 0).bytes())).data());
  Cart_Request req = CART_REQUEST_NULL;
  MPI_Info info = init_info(c);
  h.check(Cart_halo_exchange_fields_init(3, ptrs.data(), types.data(), halo, info, &req) == MPI_SUCCESS,
          c.name() + ": mixed fields init: " + Cart_error_message());
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  for (int it = 0; it < 3 && req; ++it) {
    std::vector<Layout> layouts;
    for (int f = 0; f < 3; ++f) layouts.emplace_back(kinds[f], cart, stencil, 600 + 10 * it + f);
    for (int f = 0; f < 3; ++f) layouts[f].fill(fields[f]);
    if (it == 0) {
      h.check(Cart_halo_exchange_fields(3, ptrs.data(), types.data(), halo) == MPI_SUCCESS, c.name() + ": mixed fields");
    } else {
      h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, c.name() + ": mixed fields persistent");
    }
    for (int f = 0; f < 3; ++f) expect_cells(h, layouts[f], fields[f], c.name() + " mixed field " + std::to_string(f) + " round " + std::to_string(it));
  }
  Cart_request_free(&req);
}

// Blocking exchanges through one buffer with a derived element type that is freed after each
// call and replaced by one of another size. MPI may give the new type the freed one's handle, and
// an exchange kept for that handle would move cells of the old size; Open MPI 4.1 does not reuse
// a handle while types built from it live, so here the test checks the per-call path for derived
// types (built, run and dropped each call) with changing sizes.
void reused_type_handles(Harness& h, const Case& c, MPI_Comm cart, const std::set<std::vector<int>>& stencil, Cart_Halo halo) {
  std::vector<unsigned char> arr;  // one buffer for every round, so the calls' arrays are the same
  for (int it = 0; it < 6; ++it) {
    Case k = c;
    MPI_Type_contiguous(it % 2 == 0 ? 3 : 2, MPI_INT, &k.type);  // 12 bytes, then 8, ...
    MPI_Type_commit(&k.type);
    Layout l(k, cart, stencil, 700 + it);
    if (it == 0) arr.reserve(l.bytes());  // the largest: fill() then never moves the buffer
    l.fill(arr);
    void* ptr = arr.data();
    h.check(Cart_halo_exchange_fields(1, &ptr, &k.type, halo) == MPI_SUCCESS, c.name() + ": derived type: " + Cart_error_message());
    expect_cells(h, l, arr, c.name() + " derived type, round " + std::to_string(it));
    MPI_Type_free(&k.type);
  }
}

// Blocking (two arrays, alternating), persistent (many starts with new data), several fields.
void run_case(Harness& h, const Case& given) {
  std::set<std::vector<int>> stencil;
  MPI_Comm cart = open_comm(h, given, &stencil);
  Case c = given;
  c.interior = interior_here(given, cart);
  Cart_Halo halo = open_halo(h, c, cart);
  if (!halo) {
    MPI_Comm_free(&cart);
    return;
  }
  for (int it = 0; it < 4; ++it) {  // arrays a, b, a, b: the kept datatypes are used again
    Layout l(c, cart, stencil, it);
    std::vector<unsigned char> arr;
    l.fill(arr);
    const int rc = Cart_halo_exchange(arr.data(), halo);
    h.check(rc == MPI_SUCCESS, c.name() + ": Cart_halo_exchange: " + Cart_error_message());
    expect_cells(h, l, arr, c.name() + " blocking " + std::to_string(it));
  }
  Layout l0(c, cart, stencil, 0);
  std::vector<unsigned char> arr;
  l0.fill(arr);
  const std::vector<unsigned char> before = arr;
  Cart_Request req = CART_REQUEST_NULL;
  MPI_Info info = init_info(c);
  h.check(Cart_halo_exchange_init(arr.data(), halo, info, &req) == MPI_SUCCESS, c.name() + ": init: " + Cart_error_message());
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  h.check(arr == before, c.name() + ": init wrote the array (measuring mode must time on scratch arrays)");
  if (req) expect_candidate_plan(h, c, cart, req);
  for (int it = 0; it < 5 && req; ++it) {
    Layout l(c, cart, stencil, 100 + it);
    l.fill(arr);  // the same memory, new data: the request reads it at each start
    h.check(Cart_start(&req) == MPI_SUCCESS, c.name() + ": Cart_start");
    h.check(Cart_wait(&req) == MPI_SUCCESS, c.name() + ": Cart_wait");
    expect_cells(h, l, arr, c.name() + " persistent " + std::to_string(it));
  }
  Cart_request_free(&req);
  std::vector<std::vector<unsigned char>> fields(3);
  std::vector<void*> ptrs;
  std::vector<Layout> layouts;
  for (int f = 0; f < 3; ++f) layouts.emplace_back(c, cart, stencil, 200 + f);
  for (int f = 0; f < 3; ++f) {
    layouts[f].fill(fields[f]);
    ptrs.push_back(fields[f].data());
  }
  h.check(Cart_halo_exchange_fields(3, ptrs.data(), nullptr, halo) == MPI_SUCCESS, c.name() + ": fields: " + Cart_error_message());
  for (int f = 0; f < 3; ++f) expect_cells(h, layouts[f], fields[f], c.name() + " field " + std::to_string(f));
  mixed_fields(h, c, cart, stencil, halo);
  reused_type_handles(h, c, cart, stencil, halo);
  h.check(Cart_halo_free(&halo) == MPI_SUCCESS && halo == CART_HALO_NULL, c.name() + ": Cart_halo_free");
  MPI_Comm_free(&cart);
}

// Uneven decompositions (global interiors cut into blocks that differ by a cell): every
// algorithm, 2-D and 3-D, tori, meshes and mixed grids, the three stencil sources, asymmetric
// ghosts; auto measured at init and at creation.
std::vector<Case> uneven_cases() {
  std::vector<Case> out;
  int n = 0;
  for (const char* algo : {"auto", "direct", "combining", "dimwise", "split", "hybrid"}) {
    for (int d = 2; d <= 3; ++d, ++n) {
      Case c;
      c.d = d, c.algo = algo;
      c.order = n % 2 ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
      c.type = n % 3 ? MPI_DOUBLE : MPI_INT, c.type_name = n % 3 ? "double" : "int";
      c.global = d == 2 ? std::vector<int>{26, 25} : std::vector<int>{25, 10, 9};
      c.periods = n % 3 == 0 ? std::vector<int>(d, 1) : n % 3 == 1 ? std::vector<int>(d, 0) : std::vector<int>{1, 0, 1};
      c.periods.resize(d);
      c.lo = d == 2 ? std::vector<int>{2, 1} : std::vector<int>{1, 3, 2};
      c.hi = d == 2 ? std::vector<int>{1, 3} : std::vector<int>{2, 1, 1};
      const bool dimwise = std::string(algo) == "dimwise";
      if (n % 3 == 1) c.stencil = d == 2 ? "cart:1,0;-1,0;0,1;0,-1;2,0;0,-2" : "cart:1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;0,2,0";
      if (n % 3 == 2 && !dimwise)
        c.stencil = d == 2 ? "info:offsets:1,1;-1,-1;1,-1;-1,1;1,0;-1,0;0,1;0,-1" : "info:offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1";
      out.push_back(c);
    }
  }
  // Split with temps whose cells are cut into boxes by the extents (3 or 2 cells in dimension 1
  // where it has two ranks): the ranks' messages differ in parts, never between neighbours.
  Case cut;
  cut.d = 3, cut.algo = "split", cut.periods = {1, 1, 1}, cut.global = {9, 5, 4};
  cut.lo = {1, 1, 1}, cut.hi = {1, 1, 1}, cut.stencil = "info:offsets:1,1,0;1,-1,0;1,0,1";
  out.push_back(cut);
  cut.algo = "auto";
  out.push_back(cut);
  Case at_init = out[0], at_create = out[1];  // auto, 2-D and 3-D
  at_init.tune = Case::Tune::kAtInit;
  at_create.tune = Case::Tune::kAtCreate;
  out.push_back(at_init);
  out.push_back(at_create);
  return out;
}

std::vector<Case> cases() {
  const char* algos[] = {"auto", "direct", "combining", "dimwise", "split", "hybrid"};
  struct Type {
    MPI_Datatype t;
    const char* name;
  };
  static MPI_Datatype triple = MPI_DATATYPE_NULL;
  if (triple == MPI_DATATYPE_NULL) {
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
  }
  const Type types[] = {{MPI_DOUBLE, "double"}, {MPI_INT, "int"}, {MPI_CHAR, "char"}, {triple, "3int"}, {MPI_SHORT, "short"}};
  std::vector<Case> out;
  int n = 0;
  for (const char* algo : algos) {
    for (int d = 2; d <= 3; ++d) {
      for (int variant = 0; variant < 3; ++variant, ++n) {
        Case c;
        c.d = d;
        c.algo = algo;
        c.type = types[n % 5].t;
        c.type_name = types[n % 5].name;
        c.order = n % 2 ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        if (d == 2) {
          c.interior = {5, 4};
          c.periods = variant == 0 ? std::vector<int>{1, 1} : variant == 1 ? std::vector<int>{0, 0} : std::vector<int>{1, 0};
          c.lo = variant == 0 ? std::vector<int>{1, 1} : variant == 1 ? std::vector<int>{3, 0} : std::vector<int>{2, 3};
          c.hi = variant == 0 ? std::vector<int>{1, 1} : variant == 1 ? std::vector<int>{1, 2} : std::vector<int>{3, 1};
        } else {
          c.interior = {4, 3, 3};
          c.periods = variant == 0 ? std::vector<int>{1, 1, 1} : variant == 1 ? std::vector<int>{0, 0, 0} : std::vector<int>{0, 1, 1};
          c.lo = variant == 0 ? std::vector<int>{1, 1, 1} : variant == 1 ? std::vector<int>{2, 1, 0} : std::vector<int>{3, 2, 1};
          c.hi = variant == 0 ? std::vector<int>{1, 1, 1} : variant == 1 ? std::vector<int>{1, 3, 2} : std::vector<int>{1, 2, 3};
        }
        // Stencils: Moore from a plain communicator; faces only (von Neumann) from a cartplan
        // communicator whose other offsets (distance 2) name no region; faces and corners
        // without edges (not prefix-closed: no dimwise) from Info cartplan_stencil.
        const bool dimwise = std::string(algo) == "dimwise";
        if (variant == 1) c.stencil = d == 2 ? "cart:1,0;-1,0;0,1;0,-1;2,0;0,-2" : "cart:1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;0,2,0";
        if (variant == 2 && !dimwise)
          c.stencil = d == 2 ? "info:offsets:1,1;-1,-1;1,-1;-1,1;1,0;-1,0;0,1;0,-1" : "info:offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1";
        out.push_back(c);
      }
    }
  }
  // 1-D (ring and chain), empty halos (every width 0: nothing is sent or written) and 4-D.
  Case ring;
  ring.d = 1, ring.periods = {1}, ring.interior = {7}, ring.lo = {3}, ring.hi = {2}, ring.algo = "combining";
  out.push_back(ring);
  Case chain = ring;
  chain.periods = {0}, chain.lo = {0}, chain.hi = {3}, chain.algo = "auto", chain.type = MPI_SHORT, chain.type_name = "short";
  out.push_back(chain);
  Case empty;
  empty.d = 2, empty.periods = {1, 0}, empty.interior = {3, 3}, empty.lo = {0, 0}, empty.hi = {0, 0};
  out.push_back(empty);
  Case four;
  four.d = 4, four.periods = {1, 0, 1, 0}, four.interior = {2, 3, 2, 2}, four.lo = {1, 1, 0, 2}, four.hi = {2, 1, 1, 0};
  four.order = MPI_ORDER_FORTRAN, four.type = MPI_INT, four.type_name = "int";
  out.push_back(four);
  // Measuring mode on the auto cases (2-D and 3-D, every stencil source), asked at init and at
  // creation; and on a forced algorithm, where it measures nothing.
  for (std::size_t i = 0; i < 6; ++i) {
    Case m = out[i];
    m.tune = i % 2 ? Case::Tune::kAtCreate : Case::Tune::kAtInit;
    out.push_back(m);
  }
  Case forced = out[6];  // direct, 2-D
  forced.tune = Case::Tune::kAtInit;
  out.push_back(forced);
  for (Case& u : uneven_cases()) out.push_back(std::move(u));
  return out;
}

// Two halos (different shapes and types, one of them an uneven decomposition) with persistent
// requests in flight together with a persistent Cart_alltoall (combining) of the collectives, all
// three in one Cart_startall and completed in a rank-dependent order and pattern.
void two_in_flight(Harness& h) {
  Case a;  // an uneven decomposition: 22 x 11 cells cut into blocks
  a.d = 2, a.periods = {1, 0}, a.global = {22, 11}, a.lo = {2, 1}, a.hi = {1, 2}, a.type = MPI_DOUBLE, a.type_name = "double";
  Case b;
  b.d = 2, b.periods = {1, 1}, b.interior = {3, 4}, b.lo = {1, 1}, b.hi = {1, 1}, b.type = MPI_INT, b.type_name = "int";
  b.order = MPI_ORDER_FORTRAN, b.algo = "combining";
  std::set<std::vector<int>> sa, sb;
  MPI_Comm ca = open_comm(h, a, &sa), cb = open_comm(h, b, &sb);
  a.interior = interior_here(a, ca);
  Cart_Halo ha = open_halo(h, a, ca), hb = open_halo(h, b, cb);
  if (!ha || !hb) return;
  Layout la0(a, ca, sa, 0), lb0(b, cb, sb, 0);
  std::vector<unsigned char> xa(la0.bytes()), xb(lb0.bytes());
  Cart_Request r[3] = {CART_REQUEST_NULL, CART_REQUEST_NULL, CART_REQUEST_NULL};
  h.check(Cart_halo_exchange_init(xa.data(), ha, MPI_INFO_NULL, &r[0]) == MPI_SUCCESS, "two in flight: init a");
  h.check(Cart_halo_exchange_init(xb.data(), hb, MPI_INFO_NULL, &r[1]) == MPI_SUCCESS, "two in flight: init b");
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  const std::vector<int> offs = {1, 0, -1, 0, 0, 1, 0, -1, 1, 1};
  MPI_Comm cc = cartplan::mpitest::open_cart(2, {dims[0], dims[1]}, {1, 1}, 5, offs, "combining");
  int sendbuf[5], recvbuf[5], sources[5], targets[5];
  Cart_neighbor_get(cc, 5, sources, MPI_UNWEIGHTED, 5, targets, MPI_UNWEIGHTED);
  h.check(Cart_alltoall_init(sendbuf, 1, MPI_INT, recvbuf, 1, MPI_INT, cc, MPI_INFO_NULL, &r[2]) == MPI_SUCCESS, "alltoall init");
  for (int it = 0; it < 20; ++it) {
    Layout la(a, ca, sa, it), lb(b, cb, sb, 50 + it);
    la.fill(xa);
    lb.fill(xb);
    for (int i = 0; i < 5; ++i) sendbuf[i] = (h.rank * 100 + i) * 100 + it, recvbuf[i] = -1;
    h.check(Cart_startall(3, r) == MPI_SUCCESS, "two in flight: startall");
    if ((h.rank + it) % 3 == 0) {
      h.check(Cart_waitall(3, r) == MPI_SUCCESS, "two in flight: waitall");
    } else {
      const int first = (h.rank + it) % 2;  // rank-dependent: b before a on some ranks
      int flag = 0;
      while (!flag) h.check(Cart_test(&r[first], &flag) == MPI_SUCCESS, "two in flight: test");
      h.check(Cart_wait(&r[2]) == MPI_SUCCESS, "two in flight: wait alltoall");
      h.check(Cart_wait(&r[1 - first]) == MPI_SUCCESS, "two in flight: wait");
    }
    expect_cells(h, la, xa, "two in flight a " + std::to_string(it));
    expect_cells(h, lb, xb, "two in flight b " + std::to_string(it));
    for (int i = 0; i < 5; ++i)
      h.check(recvbuf[i] == (sources[i] * 100 + i) * 100 + it, "alltoall in flight with halos: block " + std::to_string(i));
  }
  Cart_request_free(&r[2]);
  MPI_Comm_free(&cc);
  // A halo freed while its request lives: the request keeps working until freed.
  Cart_halo_free(&ha);
  Layout la(a, ca, sa, 99);
  la.fill(xa);
  h.check(Cart_start(&r[0]) == MPI_SUCCESS && Cart_wait(&r[0]) == MPI_SUCCESS, "request after Cart_halo_free");
  expect_cells(h, la, xa, "request after Cart_halo_free");
  Cart_request_free(&r[0]);
  Cart_request_free(&r[1]);
  Cart_halo_free(&hb);
  MPI_Comm_free(&ca);
  MPI_Comm_free(&cb);
}

void expect_error(Harness& h, int rc, int code, const std::string& words, const std::string& what) {
  const std::string msg = Cart_error_message();
  h.check(rc == code, what + ": error class " + std::to_string(rc) + ", expected " + std::to_string(code) + " (" + msg + ")");
  h.check(words.empty() || contains(msg, words), what + ": message '" + msg + "' lacks '" + words + "'");
}

int errhandler_calls = 0;
void count_errors(MPI_Comm*, int*, ...) { ++errhandler_calls; }

void bad_input(Harness& h) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(h.size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int in[2] = {4, 4}, g[2] = {1, 1}, wide[2] = {5, 1}, zero[2] = {4, 0};
  Cart_Halo halo = CART_HALO_NULL;
  auto create = [&](MPI_Comm comm, int d, const int* interior, const int* lo, MPI_Datatype t, int order, MPI_Info info) {
    return Cart_halo_create(comm, d, interior, lo, g, t, order, info, &halo);
  };
  expect_error(h, create(MPI_COMM_NULL, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_COMM, "MPI_COMM_NULL", "null comm");
  expect_error(h, create(MPI_COMM_WORLD, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_TOPOLOGY, "Cartesian", "no topology");
  expect_error(h, create(cart, 3, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_DIMS, "2 dimensions", "d differs");
  expect_error(h, create(cart, 0, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_DIMS, "d = 0", "d = 0");
  expect_error(h, create(cart, 2, nullptr, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_ARG, "NULL", "interior NULL");
  expect_error(h, create(cart, 2, zero, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_ARG, "interior", "interior 0");
  expect_error(h, create(cart, 2, in, wide, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_ARG, "wider than the interior", "ghost too wide");
  expect_error(h, create(cart, 2, in, g, MPI_DOUBLE, 7, MPI_INFO_NULL), MPI_ERR_ARG, "MPI_ORDER_C", "bad order");
  expect_error(h, create(cart, 2, in, g, MPI_DATATYPE_NULL, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_TYPE, "elemtype", "null type");
  h.check(halo == CART_HALO_NULL, "a failed creation leaves CART_HALO_NULL");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "bogus");
  expect_error(h, create(cart, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, info), MPI_ERR_INFO_VALUE, "cartplan_algorithm", "bad algorithm");
  MPI_Info_set(info, "cartplan_algorithm", "auto");
  MPI_Info_set(info, "cartplan_tune", "bogus");
  expect_error(h, create(cart, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, info), MPI_ERR_INFO_VALUE, "cartplan_tune", "create with a bad cartplan_tune");
  MPI_Info_delete(info, "cartplan_tune");
  MPI_Info_set(info, "cartplan_algorithm", "dimwise");
  MPI_Info_set(info, "cartplan_stencil", "offsets:1,1;-1,-1");  // corners without faces: not prefix-closed
  expect_error(h, create(cart, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, info), MPI_ERR_ARG, "", "dimwise on corners only");
  MPI_Info_set(info, "cartplan_algorithm", "auto");
  MPI_Info_set(info, "cartplan_stencil", "offsets:2,0;-1,0");
  expect_error(h, create(cart, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, info), MPI_ERR_ARG, "sign vector", "stencil offset 2");
  MPI_Comm pc = cartplan::mpitest::open_cart(2, {dims[0], dims[1]}, {1, 1}, 2, {1, 0, -1, 0}, "auto");
  MPI_Info_set(info, "cartplan_stencil", "offsets:1,0;-1,0");
  expect_error(h, create(pc, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, info), MPI_ERR_INFO_VALUE, "cartplan_stencil", "stencil key on a cartplan comm");
  MPI_Info_free(&info);
  MPI_Comm_free(&pc);
  pc = cartplan::mpitest::open_cart(2, {dims[0], dims[1]}, {1, 1}, 1, {2, 0}, "auto");
  expect_error(h, create(pc, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_ARG, "no ghost region", "no sign-vector offset");
  MPI_Comm_free(&pc);
  if (h.size > 1) {  // rank 0 describes another array: every rank learns it
    // Rank 0's interior[1] differs from that of rank (1, 0), at the same coordinate of dimension
    // 1: not a block decomposition (interiors may differ only along their own dimension).
    int other[2] = {4, h.rank == 0 ? 5 : 4};
    expect_error(h, create(cart, 2, other, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_ARG,
                 "ranks at coordinate 0 of dimension 1 passed interior[1] from 4 to 5: a halo's interiors may differ only as a block decomposition does",
                 "interiors that are no block decomposition");
    const MPI_Datatype t = h.rank == h.size - 1 ? MPI_FLOAT : MPI_DOUBLE;
    expect_error(h, create(cart, 2, in, g, t, MPI_ORDER_C, MPI_INFO_NULL), MPI_ERR_ARG, "different halo descriptions", "type mismatch");
    // A bad argument on one rank only: every rank returns an error.
    const int* lo = h.rank == 1 ? wide : g;
    const int rc = create(cart, 2, in, lo, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL);
    expect_error(h, rc, MPI_ERR_ARG, h.rank == 1 ? "wider than the interior" : "another rank", "bad on one rank");
  }
  expect_error(h, Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, nullptr), MPI_ERR_ARG, "halo is NULL", "halo NULL");

  h.check(create(cart, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL) == MPI_SUCCESS, "good halo");
  std::vector<double> arr(36);
  expect_error(h, Cart_halo_exchange(nullptr, halo), MPI_ERR_BUFFER, "array is NULL", "exchange NULL array");
  expect_error(h, Cart_halo_exchange(MPI_BOTTOM, halo), MPI_ERR_BUFFER, "MPI_BOTTOM", "exchange MPI_BOTTOM");
  expect_error(h, Cart_halo_exchange(MPI_IN_PLACE, halo), MPI_ERR_BUFFER, "array is MPI_IN_PLACE", "exchange MPI_IN_PLACE");
  expect_error(h, Cart_halo_exchange(arr.data(), CART_HALO_NULL), MPI_ERR_ARG, "CART_HALO_NULL", "exchange NULL halo");
  expect_error(h, Cart_halo_exchange_fields(0, nullptr, nullptr, halo), MPI_ERR_COUNT, "count", "fields count 0");
  void* two[2] = {arr.data(), nullptr};
  expect_error(h, Cart_halo_exchange_fields(2, two, nullptr, halo), MPI_ERR_BUFFER, "arrays[1]", "fields NULL array");
  two[1] = MPI_IN_PLACE;
  expect_error(h, Cart_halo_exchange_fields(2, two, nullptr, halo), MPI_ERR_BUFFER, "arrays[1] is MPI_IN_PLACE", "fields MPI_IN_PLACE");
  std::vector<double> arr2(36);
  void* pair[2] = {arr.data(), arr2.data()};
  MPI_Datatype null_type[2] = {MPI_DOUBLE, MPI_DATATYPE_NULL};
  expect_error(h, Cart_halo_exchange_fields(2, pair, null_type, halo), MPI_ERR_TYPE, "types[1]", "fields with MPI_DATATYPE_NULL");
  if (h.size > 1) {  // element sizes that differ between ranks: every rank learns it at init
    MPI_Datatype mine[2] = {MPI_DOUBLE, h.rank == 0 ? MPI_FLOAT : MPI_DOUBLE};
    Cart_Request r2 = CART_REQUEST_NULL;
    expect_error(h, Cart_halo_exchange_fields_init(2, pair, mine, halo, MPI_INFO_NULL, &r2), MPI_ERR_TRUNCATE,
                 "element sizes add up to different sums on different ranks (min 12, max 16", "fields init with different element sizes");
    h.check(r2 == CART_REQUEST_NULL, "fields init mismatch leaves CART_REQUEST_NULL");
  }
  // init with a NULL request on rank 0 only: every rank returns an error (agreed).
  Cart_Request req = CART_REQUEST_NULL;
  const int rc = Cart_halo_exchange_init(arr.data(), halo, MPI_INFO_NULL, h.rank == 0 ? nullptr : &req);
  expect_error(h, rc, MPI_ERR_REQUEST, h.rank == 0 ? "request is NULL" : "another rank", "init NULL request on rank 0");
  h.check(req == CART_REQUEST_NULL, "failed init leaves CART_REQUEST_NULL");
  MPI_Info tune;
  MPI_Info_create(&tune);
  MPI_Info_set(tune, "cartplan_tune", "bogus");
  expect_error(h, Cart_halo_exchange_init(arr.data(), halo, tune, &req), MPI_ERR_INFO_VALUE, "cartplan_tune", "init with a bad cartplan_tune");
  if (h.size > 1) {  // measuring on one rank only: every rank learns it at init
    MPI_Info_set(tune, "cartplan_tune", h.rank == 0 ? "measure" : "model");
    expect_error(h, Cart_halo_exchange_init(arr.data(), halo, tune, &req), MPI_ERR_ARG, "measuring mode", "cartplan_tune differs");
  }
  h.check(req == CART_REQUEST_NULL, "failed tuned init leaves CART_REQUEST_NULL");
  MPI_Info_free(&tune);
  h.check(Cart_halo_exchange_init(arr.data(), halo, MPI_INFO_NULL, &req) == MPI_SUCCESS, "init");
  char* json = nullptr;
  expect_error(h, Cart_halo_request_plan(CART_REQUEST_NULL, &json), MPI_ERR_REQUEST, "CART_REQUEST_NULL", "request plan of NULL");
  expect_error(h, Cart_halo_request_plan(req, nullptr), MPI_ERR_ARG, "json is NULL", "request plan json NULL");
  expect_error(h, Cart_request_plan(req, &json), MPI_ERR_REQUEST, "halo", "Cart_request_plan of a halo request");
  int comb = 0;
  expect_error(h, Cart_request_algorithm(req, &comb), MPI_ERR_REQUEST, "halo", "Cart_request_algorithm of a halo request");
  h.check(Cart_start(&req) == MPI_SUCCESS, "start");
  expect_error(h, Cart_start(&req), MPI_ERR_REQUEST, "already active", "start while active");
  h.check(Cart_wait(&req) == MPI_SUCCESS, "wait");
  h.check(Cart_request_free(&req) == MPI_SUCCESS, "free request");
  expect_error(h, Cart_halo_plan(halo, nullptr), MPI_ERR_ARG, "json is NULL", "plan json NULL");
  h.check(Cart_halo_free(&halo) == MPI_SUCCESS, "free halo");
  expect_error(h, Cart_halo_free(nullptr), MPI_ERR_ARG, "halo is NULL", "free NULL");

  // Errors go to the handler the communicator had at creation.
  MPI_Errhandler counter;
  MPI_Comm_create_errhandler(count_errors, &counter);
  MPI_Comm_set_errhandler(cart, counter);
  h.check(create(cart, 2, in, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL) == MPI_SUCCESS, "halo with a counting handler");
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  errhandler_calls = 0;
  Cart_halo_exchange(nullptr, halo);
  h.check(errhandler_calls == 1, "the halo's error reached the creation-time handler once: " + std::to_string(errhandler_calls));
  Cart_halo_free(&halo);
  MPI_Errhandler_free(&counter);
  MPI_Comm_free(&cart);
}

// A multi-phase (dimwise) request must advance while its rank sits in another MPI call: odd
// ranks enter MPI_Barrier before completing their request, even ranks complete theirs first,
// which needs the odd ranks' later phases (posted by the progress hook inside the barrier).
void progress_inside_mpi(Harness& h) {
  Case c;
  c.d = 2, c.periods = {1, 1}, c.interior = {4, 4}, c.lo = {1, 2}, c.hi = {2, 1}, c.algo = "dimwise";
  std::set<std::vector<int>> stencil;
  MPI_Comm cart = open_comm(h, c, &stencil);
  Cart_Halo halo = open_halo(h, c, cart);
  if (!halo) return;
  Layout l0(c, cart, stencil, 0);
  std::vector<unsigned char> arr(l0.bytes());
  Cart_Request req = CART_REQUEST_NULL;
  h.check(Cart_halo_exchange_init(arr.data(), halo, MPI_INFO_NULL, &req) == MPI_SUCCESS, "progress: init");
  for (int it = 0; it < 10; ++it) {
    Layout l(c, cart, stencil, 500 + it);
    l.fill(arr);
    h.check(Cart_start(&req) == MPI_SUCCESS, "progress: start");
    if ((h.rank + it) % 2) MPI_Barrier(MPI_COMM_WORLD);
    h.check(Cart_wait(&req) == MPI_SUCCESS, "progress: wait");
    if ((h.rank + it) % 2 == 0) MPI_Barrier(MPI_COMM_WORLD);
    expect_cells(h, l, arr, "progress inside MPI_Barrier " + std::to_string(it));
  }
  Cart_request_free(&req);
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

// Create/exchange/free cycles: halos (two private communicators each), persistent requests and
// their lanes are released, so resident memory stays flat.
void cycles(Harness& h) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  const int interior[2] = {5, 4}, ghost[2] = {1, 2};
  std::vector<double> u(7 * 8), v(7 * 8);
  long before = 0;
  bool ok = true;
  for (int it = 0; it < 250 && ok; ++it) {
    if (it == 50) before = cartplan::mpitest::resident_kb();
    Cart_Halo halo = CART_HALO_NULL;
    Cart_Request req = CART_REQUEST_NULL;
    ok = Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, it % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, MPI_INFO_NULL,
                          &halo) == MPI_SUCCESS &&
         Cart_halo_exchange(u.data(), halo) == MPI_SUCCESS && Cart_halo_exchange(v.data(), halo) == MPI_SUCCESS &&
         Cart_halo_exchange_init(u.data(), halo, MPI_INFO_NULL, &req) == MPI_SUCCESS && Cart_start(&req) == MPI_SUCCESS &&
         Cart_wait(&req) == MPI_SUCCESS && Cart_request_free(&req) == MPI_SUCCESS && Cart_halo_free(&halo) == MPI_SUCCESS;
  }
  h.check(ok, std::string("cycles: every call succeeds: ") + Cart_error_message());
  const long grown = cartplan::mpitest::resident_kb() - before;
  h.check(before < 0 || grown < 4096, "cycles: resident memory grew by " + std::to_string(grown) + " kB over 200 halos");
  MPI_Comm_free(&cart);
}

// The "algorithm" value of a halo plan's JSON ("" if it has none).
std::string algorithm_of(const std::string& json) {
  const std::string key = "\"algorithm\": \"";
  const std::size_t at = json.find(key);
  const std::size_t end = at == std::string::npos ? at : json.find('"', at + key.size());
  return end == std::string::npos ? "" : json.substr(at + key.size(), end - at - key.size());
}

bool known_algorithm(const std::string& name) {
  for (const char* algo : {"direct", "combining", "dimwise", "split", "hybrid"})
    if (name == algo) return true;
  return false;
}

// HaloRequest::plan() of a C++ request on `array`: names a known algorithm, is the same on every
// rank, and (model mode, where the choice is deterministic) is the text Cart_halo_request_plan
// gives for a C halo of the same description and Info. `info`: the halo's creation Info.
void expect_cpp_request_plan(Harness& h, const Case& c, MPI_Comm cart, MPI_Info info, bool measuring,
                             const cartplan::mpi::HaloRequest& r, void* array, const std::string& what) {
  const std::string runs = r.plan();
  h.check(known_algorithm(algorithm_of(runs)), what + ": HaloRequest::plan() names no known algorithm: " + runs.substr(0, 200));
  h.check(same_on_every_rank(runs, cart), what + ": ranks' HaloRequest::plan() differ");
  if (measuring) return;
  Cart_Halo halo = CART_HALO_NULL;
  Cart_Request req = CART_REQUEST_NULL;
  char* json = nullptr;
  const bool ok = Cart_halo_create(cart, c.d, c.interior.data(), c.lo.data(), c.hi.data(), MPI_DOUBLE, c.order, info, &halo) ==
                      MPI_SUCCESS &&
                  Cart_halo_exchange_init(array, halo, MPI_INFO_NULL, &req) == MPI_SUCCESS &&
                  Cart_halo_request_plan(req, &json) == MPI_SUCCESS;
  h.check(ok && json && runs == json, what + ": HaloRequest::plan() is not Cart_halo_request_plan's text " + Cart_error_message());
  Cart_free_plan_json(json);
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  Cart_halo_free(&halo);
}

// A C++ halo planned with algorithm auto, in model and in measuring mode (Info cartplan_tune at
// creation): its persistent request fills the cells and reports the plan it runs.
void cpp_request_plans(Harness& h, const Case& c, MPI_Comm cart, const std::set<std::vector<int>>& stencil) {
  for (const char* tune : {"model", "measure"}) {
    const std::string what = std::string("C++ auto, ") + tune;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_tune", tune);
    try {
      cartplan::mpi::Halo halo(cart, c.interior, c.lo, c.hi, MPI_DOUBLE, c.order, info);
      Layout l(c, cart, stencil, 500);
      std::vector<unsigned char> a;
      l.fill(a);
      cartplan::mpi::HaloRequest r = halo.exchange_init(a.data());
      r.run();
      expect_cells(h, l, a, what);
      expect_cpp_request_plan(h, c, cart, info, std::string(tune) == "measure", r, a.data(), what);
    } catch (const cartplan::mpi::MpiError& e) {
      h.check(false, what + ": unexpected MpiError: " + e.what());
    }
    MPI_Info_free(&info);
  }
}

// Runs a C++ request `runs` times, each on new data (Layout salt + run), and checks every cell.
void rerun_and_check(Harness& h, const Case& c, MPI_Comm cart, const std::set<std::vector<int>>& stencil, cartplan::mpi::HaloRequest& r,
                     std::vector<unsigned char>& a, int runs, int salt, const std::string& what) {
  for (int it = 0; it < runs; ++it) {
    Layout l(c, cart, stencil, salt + it);
    l.fill(a);
    r.run();
    expect_cells(h, l, a, what + std::to_string(it));
  }
}

// An Info with cartplan_tune = `tune` (the caller frees it).
MPI_Info tune_info(const char* tune) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_tune", tune);
  return info;
}

// The MpiError class a C++ call throws (MPI_SUCCESS if none); *message gets its text.
template <class F>
int thrown_code(F f, std::string* message) {
  try {
    f();
  } catch (const cartplan::mpi::MpiError& e) {
    *message = e.what();
    return e.code();
  }
  return MPI_SUCCESS;
}

// Halo::exchange_init with an Info (issue 33): measuring mode per request from C++, as
// Cart_halo_exchange_init's Info gives it from C. On an auto halo created in model mode, a
// request with cartplan_tune = measure (one array, and two fields) fills every cell and runs a
// plan every rank agrees on; on a halo created measuring, a request with cartplan_tune = model
// runs exactly the model's pick (halo.plan()); bad values and ranks that disagree throw on every rank.
void cpp_init_info(Harness& h, const Case& c, MPI_Comm cart, const std::set<std::vector<int>>& stencil) {
  MPI_Info measure = tune_info("measure"), model = tune_info("model"), bogus = tune_info("bogus");
  try {
    cartplan::mpi::Halo halo(cart, c.interior, c.lo, c.hi, MPI_DOUBLE, c.order);  // auto, model mode
    std::vector<unsigned char> a, b;
    Layout l0(c, cart, stencil, 600);
    l0.fill(a);
    cartplan::mpi::HaloRequest r = halo.exchange_init(a.data(), measure);
    const std::string runs = r.plan();
    h.check(known_algorithm(algorithm_of(runs)) && same_on_every_rank(runs, cart), "C++ init Info measure: plan() " + runs.substr(0, 120));
    rerun_and_check(h, c, cart, stencil, r, a, 2, 610, "C++ init Info measure, run ");
    Layout l1(c, cart, stencil, 620), l2(c, cart, stencil, 621);
    l1.fill(a);
    l2.fill(b);
    cartplan::mpi::HaloRequest f = halo.exchange_init(std::vector<void*>{a.data(), b.data()}, {}, measure);
    h.check(same_on_every_rank(f.plan(), cart), "C++ fields init Info measure: ranks' plan() differ");
    f.run();
    expect_cells(h, l1, a, "C++ fields init Info measure a");
    expect_cells(h, l2, b, "C++ fields init Info measure b");
    std::string msg;
    h.check(thrown_code([&] { (void)halo.exchange_init(a.data(), bogus); }, &msg) == MPI_ERR_INFO_VALUE && contains(msg, "cartplan_tune"),
            "C++ init Info cartplan_tune=bogus throws MpiError(MPI_ERR_INFO_VALUE): " + msg);
    if (h.size > 1) {
      const int code = thrown_code([&] { (void)halo.exchange_init(a.data(), h.rank == 0 ? measure : model); }, &msg);
      h.check(code == MPI_ERR_ARG && contains(msg, "measuring mode"), "C++ init Info measuring on one rank throws on every rank: " + msg);
    }
    MPI_Info at_create = tune_info("measure");
    cartplan::mpi::Halo measuring(cart, c.interior, c.lo, c.hi, MPI_DOUBLE, c.order, at_create);
    MPI_Info_free(&at_create);
    Layout l3(c, cart, stencil, 630);
    l3.fill(a);
    cartplan::mpi::HaloRequest m = measuring.exchange_init(a.data(), model);
    h.check(m.plan() == measuring.plan(), "C++ init Info model on a measuring halo runs the model's pick (halo.plan())");
    m.run();
    expect_cells(h, l3, a, "C++ init Info model on a measuring halo");
  } catch (const cartplan::mpi::MpiError& e) {
    h.check(false, std::string("C++ init Info: unexpected MpiError: ") + e.what());
  }
  MPI_Info_free(&measure);
  MPI_Info_free(&model);
  MPI_Info_free(&bogus);
}

// Info cartplan_dim_order at creation: the plan's dimension order is the one asked for (every
// planner that takes one), the exchange fills every cell, and bad values fail on every rank.
void dim_order_key(Harness& h) {
  Case c;
  c.d = 3, c.periods = {1, 0, 1}, c.interior = {4, 3, 5}, c.lo = {1, 2, 1}, c.hi = {2, 1, 1}, c.algo = "dimwise";
  std::set<std::vector<int>> stencil;
  MPI_Comm cart = open_comm(h, c, &stencil);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "dimwise");
  const std::pair<const char*, const char*> asked[] = {{"2,0,1", "[2, 0, 1]"}, {"1,2,0", "[1, 2, 0]"}, {"natural", "[0, 1, 2]"}};
  for (const auto& [key, order] : asked) {
    MPI_Info_set(info, "cartplan_dim_order", key);
    Cart_Halo halo = CART_HALO_NULL;
    const int rc = Cart_halo_create(cart, 3, c.interior.data(), c.lo.data(), c.hi.data(), MPI_DOUBLE, MPI_ORDER_C, info, &halo);
    h.check(rc == MPI_SUCCESS, std::string("dim_order ") + key + ": " + Cart_error_message());
    if (rc != MPI_SUCCESS) continue;
    char* json = nullptr;
    Cart_halo_plan(halo, &json);
    const std::string text = json ? json : "";
    Cart_free_plan_json(json);
    h.check(contains(text, std::string("\"dim_order\": ") + order), std::string("dim_order ") + key + ": the plan's order is not " + order);
    Layout l(c, cart, stencil, 11);
    std::vector<unsigned char> a;
    l.fill(a);
    h.check(Cart_halo_exchange(a.data(), halo) == MPI_SUCCESS, std::string("dim_order ") + key + ": exchange");
    expect_cells(h, l, a, std::string("dim_order ") + key);
    Cart_halo_free(&halo);
  }
  for (const char* bad : {"0,0,1", "0,1", "0,x,2", "3,1,0"}) {
    MPI_Info_set(info, "cartplan_dim_order", bad);
    Cart_Halo halo = CART_HALO_NULL;
    const int rc = Cart_halo_create(cart, 3, c.interior.data(), c.lo.data(), c.hi.data(), MPI_DOUBLE, MPI_ORDER_C, info, &halo);
    expect_error(h, rc, MPI_ERR_INFO_VALUE, "cartplan_dim_order", std::string("dim_order '") + bad + "'");
    h.check(halo == CART_HALO_NULL, std::string("dim_order '") + bad + "': no halo");
  }
  MPI_Info_free(&info);
  MPI_Comm_free(&cart);
}

// The algorithm of a halo's plan ("direct", "dimwise", ...), from Cart_halo_plan's JSON.
std::string plan_algorithm(Cart_Halo halo) {
  char* json = nullptr;
  if (Cart_halo_plan(halo, &json) != MPI_SUCCESS || !json) return "";
  const std::string text = json;
  Cart_free_plan_json(json);
  const std::size_t at = text.find("\"algorithm\": \"");
  if (at == std::string::npos) return "";
  const std::size_t from = at + 14;
  return text.substr(from, text.find('"', from) - from);
}

// Info cartplan_cost_model and the alpha/beta keys at Cart_halo_create (on a plain MPI_Cart_create
// communicator, where nothing else names a model): a file that does not load is
// MPI_ERR_INFO_VALUE naming the key; a model whose messages cost much picks fewer messages
// than direct's eight on a 2-D torus, one where only phases cost picks direct; the keys override
// the file.
void cost_model_info(Harness& h) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  const int in[2] = {16, 16}, g[2] = {1, 1};
  MPI_Info info;
  MPI_Info_create(&info);
  Cart_Halo halo = CART_HALO_NULL;
  auto create = [&] { return Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, info, &halo); };
  MPI_Info_set(info, "cartplan_cost_model", "/nonexistent/cartplan_model.json");
  expect_error(h, create(), MPI_ERR_INFO_VALUE, "cartplan_cost_model", "halo with a model file that does not exist");
  h.check(halo == CART_HALO_NULL, "a model file that does not exist: no halo");
  const std::string costly = cartplan::mpitest::write_cost_model(h.rank, "halo_costly_messages", 1000.0, 0.0);
  const std::string cheap = cartplan::mpitest::write_cost_model(h.rank, "halo_cheap_messages", 0.0, 0.0);
  std::string picked[2];
  for (int k = 0; k < 2; ++k) {
    MPI_Info_set(info, "cartplan_cost_model", (k == 0 ? costly : cheap).c_str());
    const int rc = create();
    h.check(rc == MPI_SUCCESS, "halo with a model file: " + std::string(Cart_error_message()));
    if (rc != MPI_SUCCESS) continue;
    picked[k] = plan_algorithm(halo);
    std::vector<double> a(18 * 18, -1.0);
    h.check(Cart_halo_exchange(a.data(), halo) == MPI_SUCCESS, "halo with a model file: exchange");
    Cart_halo_free(&halo);
  }
  // On a grid with two ranks or more in both dimensions (from 2x2 on) the pick follows the model;
  // with one rank in a dimension (7 ranks: 7x1) direct has only two messages to send.
  const bool both = dims[0] > 1 && dims[1] > 1;
  if (both) {
    h.check(!picked[0].empty() && picked[0] != "direct", "messages at 1000 us each: the plan is '" + picked[0] + "', expected fewer messages than direct");
    h.check(picked[1] == "direct", "messages free: the plan is '" + picked[1] + "', expected direct");
  }
  MPI_Info_set(info, "cartplan_alpha_us", "1000");  // over the cheap file: messages cost again
  h.check(create() == MPI_SUCCESS, "cartplan_alpha_us over a file: " + std::string(Cart_error_message()));
  if (both) h.check(plan_algorithm(halo) == picked[0], "cartplan_alpha_us overrides the file's alpha");
  Cart_halo_free(&halo);
  MPI_Info_set(info, "cartplan_alpha_us", "-1");
  expect_error(h, create(), MPI_ERR_INFO_VALUE, "cartplan_alpha_us", "halo with a negative alpha");
  MPI_Info_free(&info);
  MPI_Comm_free(&cart);
}

// The C++ form (cartplan.hpp): Halo and HaloRequest over the same core, errors as MpiError.
void cpp_form(Harness& h) {
  Case c;
  c.d = 3, c.periods = {1, 0, 1}, c.interior = {4, 4, 3}, c.lo = {1, 2, 1}, c.hi = {2, 1, 0};
  c.order = MPI_ORDER_FORTRAN, c.algo = "dimwise";
  std::set<std::vector<int>> stencil;
  MPI_Comm cart = open_comm(h, c, &stencil);
  try {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", "dimwise");
    cartplan::mpi::Halo halo(cart, c.interior, c.lo, c.hi, MPI_DOUBLE, MPI_ORDER_FORTRAN, info);
    h.check(contains(halo.plan(), "\"algorithm\": \"dimwise\""), "C++: plan()");
    Layout l0(c, cart, stencil, 7);
    std::vector<unsigned char> a, b;
    l0.fill(a);
    halo.exchange(a.data());
    expect_cells(h, l0, a, "C++ blocking");
    cartplan::mpi::HaloRequest r = halo.exchange_init(a.data());
    h.check(algorithm_of(r.plan()) == "dimwise" && r.plan() == halo.plan(), "C++: HaloRequest::plan() of a forced dimwise halo");
    expect_cpp_request_plan(h, c, cart, info, false, r, a.data(), "C++ dimwise");
    MPI_Info_free(&info);
    rerun_and_check(h, c, cart, stencil, r, a, 3, 300, "C++ persistent ");
    Layout l1(c, cart, stencil, 400), l2(c, cart, stencil, 401);
    l1.fill(a);
    l2.fill(b);
    halo.exchange(std::vector<void*>{a.data(), b.data()});
    expect_cells(h, l1, a, "C++ fields a");
    expect_cells(h, l2, b, "C++ fields b");
    cartplan::mpi::HaloRequest moved = std::move(r);
    int code = MPI_SUCCESS;
    try {
      (void)r.plan();
    } catch (const cartplan::mpi::MpiError& e) {
      code = e.code();
    }
    h.check(code == MPI_ERR_REQUEST, "C++: plan() of a moved-from request throws MpiError(MPI_ERR_REQUEST)");
  } catch (const cartplan::mpi::MpiError& e) {
    h.check(false, std::string("C++: unexpected MpiError: ") + e.what());
  }
  cpp_request_plans(h, c, cart, stencil);
  cpp_init_info(h, c, cart, stencil);
  int code = MPI_SUCCESS;
  std::string msg;
  try {
    cartplan::mpi::Halo bad(cart, c.interior, c.lo, {1, 1}, MPI_DOUBLE);  // ghost_hi of the wrong length
  } catch (const cartplan::mpi::MpiError& e) {
    code = e.code();
    msg = e.what();
  }
  h.check(contains(msg, "one width per dimension"), "C++: the message names the lengths: " + msg);
  h.check(code == MPI_ERR_ARG, "C++: a bad description throws MpiError(MPI_ERR_ARG) on every rank: " + std::to_string(code));
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  for (const Case& c : cases()) run_case(h, c);
  two_in_flight(h);
  progress_inside_mpi(h);
  cycles(h);
  cpp_form(h);
  bad_input(h);
  dim_order_key(h);
  cost_model_info(h);
  return h.finish("halo_api_test");
}
