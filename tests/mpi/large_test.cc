// MPI test of messages larger than INT_MAX bytes: one block of 2^31 + 24 bytes between two
// ranks, through the large-count form (MPI_Count counts) and through MPI_BYTE counts that would
// wrap an int; then the same block through the graph collectives' large-count forms on the
// ring as a distributed graph, and on a self edge. Needs about 9 GiB of memory on 2 ranks.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

int main(int argc, char** argv) {
  cartplan::mpitest::Harness h(&argc, &argv);
  // A ring over the ranks with the single offset +1: block 0 goes to the next rank.
  int dims[1] = {h.size}, periods[1] = {1}, offs[1] = {1};
  MPI_Comm cart = MPI_COMM_NULL;
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 1, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart) == MPI_SUCCESS,
          "create");
  int me = 0, src = 0, dst = 0;
  MPI_Comm_rank(cart, &me);
  Cart_relative_shift(cart, offs, &src, &dst);
  const MPI_Count bytes = (MPI_Count{1} << 31) + 24;
  std::vector<unsigned char> send(static_cast<std::size_t>(bytes)), recv(static_cast<std::size_t>(bytes), 0);
  auto pattern = [](int rank, MPI_Count i) { return static_cast<unsigned char>((i * 131 + rank * 17 + (i >> 20)) & 0xff); };
  for (MPI_Count i = 0; i < bytes; ++i) send[static_cast<std::size_t>(i)] = pattern(me, i);
  auto check = [&](const std::string& what) {
    bool ok = true;
    // Every 4099th byte and the last 64 bytes (beyond 2^31) carry the source's pattern.
    for (MPI_Count i = 0; i < bytes && ok; i += 4099) ok = recv[static_cast<std::size_t>(i)] == pattern(src, i);
    for (MPI_Count i = bytes - 64; i < bytes && ok; ++i) ok = recv[static_cast<std::size_t>(i)] == pattern(src, i);
    h.check(ok, what + " delivers all 2^31 + 24 bytes");
  };
  h.check(Cart_alltoall_c(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, cart) == MPI_SUCCESS,
          std::string("Cart_alltoall_c: ") + Cart_error_message());
  check("Cart_alltoall_c");
  std::fill(recv.begin(), recv.end(), 0);
  // The same bytes as 2^29 + 3 elements of 8 bytes: an int count, but more than INT_MAX bytes.
  const int doubles = static_cast<int>(bytes / 8);
  Cart_Request q = CART_REQUEST_NULL;
  h.check(Cart_allgather_init(send.data(), doubles, MPI_DOUBLE, recv.data(), doubles, MPI_DOUBLE, cart, MPI_INFO_NULL, &q) == MPI_SUCCESS &&
              Cart_start(&q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS,
          std::string("Cart_allgather_init with 2^31 + 24 bytes: ") + Cart_error_message());
  check("Cart_allgather_init");
  Cart_request_free(&q);
  // The same ring as a distributed graph, through the graph collectives' large-count forms: the
  // v form under auto (a blocking v call runs the linear schedule), the uniform one forced to the
  // grid (at np 2 a 1-D grid: the grid's exchange, nothing forwarded; a forwarded block would need
  // a third rank's memory). Then a self edge: the block is a local copy of 2^31 + 24 bytes.
  for (const char* algo : {"auto", "grid", "self"}) {
    const bool self = std::string(algo) == "self";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", self ? "linear" : algo);
    MPI_Comm g = MPI_COMM_NULL;
    const int in = self ? me : src, out = self ? me : dst;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &in, MPI_UNWEIGHTED, 1, &out, MPI_UNWEIGHTED, info, 0, &g);
    MPI_Info_free(&info);
    std::fill(recv.begin(), recv.end(), 0);
    const std::string what = std::string("(") + algo + ")";
    int rc = MPI_SUCCESS;
    if (self) {
      rc = Cart_graph_neighbor_alltoall_c(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, g);
      h.check(rc == MPI_SUCCESS, "Cart_graph_neighbor_alltoall_c " + what + ": " + Cart_error_message());
      const int from = src;
      src = me;  // check() compares with the pattern of its source: here this rank
      check("Cart_graph_neighbor_alltoall_c " + what);
      src = from;
    } else if (std::string(algo) == "auto") {
      const MPI_Count counts[1] = {bytes};
      const MPI_Aint displs[1] = {0};
      rc = Cart_graph_neighbor_alltoallv_c(send.data(), counts, displs, MPI_BYTE, recv.data(), counts, displs, MPI_BYTE, g);
      h.check(rc == MPI_SUCCESS, "Cart_graph_neighbor_alltoallv_c " + what + ": " + Cart_error_message());
      check("Cart_graph_neighbor_alltoallv_c " + what);
    } else {
      rc = Cart_graph_neighbor_allgather_init_c(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, g, MPI_INFO_NULL, &q);
      int ran = -1;
      if (rc == MPI_SUCCESS) Cart_graph_request_algorithm(q, &ran);
      h.check(ran == CART_GRAPH_GRID, "the allgather_init_c request runs the grid");
      if (rc == MPI_SUCCESS) rc = Cart_start(&q);
      if (rc == MPI_SUCCESS) rc = Cart_wait(&q);
      h.check(rc == MPI_SUCCESS, "Cart_graph_neighbor_allgather_init_c " + what + ": " + Cart_error_message());
      check("Cart_graph_neighbor_allgather_init_c " + what);
      Cart_request_free(&q);
    }
    MPI_Comm_free(&g);
  }
  MPI_Comm_free(&cart);
  return h.finish("large_test");
}
