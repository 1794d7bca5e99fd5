// Open MPI's single copy against its pipeline, outside cartplan: two ranks exchange one message
// of each size, described three ways, timed round-robin in one loop (engine/lower.h, trailers):
//   contiguous    the bytes as MPI_BYTE on both sides: above the eager limit ob1 reads them
//                 with one single copy (CMA on a node);
//   trailer       the same bytes plus one byte from and into a separate place, a struct of two
//                 segments on both sides: neither side is contiguous, ob1 pipelines;
//   recv split    the sender contiguous, the receiver's last byte elsewhere: only the receiver
//                 is not contiguous (does that alone keep ob1 off the single copy?).
// Every received byte is checked against the sender's rank-dependent pattern.
//
//   mpirun -np 2 bazel-bin/bench/single_copy_probe [--reps R] [--sizes B,B,..]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "single_copy_probe: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// A struct datatype over two runs of bytes at absolute addresses (used with MPI_BOTTOM).
MPI_Datatype two_runs(const void* a, int a_bytes, const void* b, int b_bytes) {
  int lens[2] = {a_bytes, b_bytes};
  MPI_Aint displs[2];
  MPI_Get_address(a, &displs[0]);
  MPI_Get_address(b, &displs[1]);
  MPI_Datatype types[2] = {MPI_BYTE, MPI_BYTE}, t;
  MPI_Type_create_struct(2, lens, displs, types, &t);
  MPI_Type_commit(&t);
  return t;
}

unsigned char pattern(int rank, int i) { return static_cast<unsigned char>(i * 31 + rank * 7 + 1); }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (np != 2) die("run it on exactly 2 ranks");
  int reps = 200;
  std::vector<int> sizes = {4096, 8192, 40000, 400000};
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--reps" && i + 1 < argc) {
      reps = std::max(5, std::atoi(argv[++i]));
    } else if (k == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) {
        const int b = std::atoi(item.c_str());
        if (b < 2) die("--sizes wants byte counts of at least 2, not '" + item + "'");
        sizes.push_back(b);
      }
    } else {
      die("usage: single_copy_probe [--reps R] [--sizes B,B,..]");
    }
  }
  const int peer = 1 - rank;
  const char* names[3] = {"contiguous", "trailer", "recv split"};
  if (rank == 0) std::printf("bytes,variant,median_us,q1_us,q3_us\n");
  for (int n : sizes) {
    std::vector<unsigned char> send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) send[static_cast<std::size_t>(i)] = pattern(rank, i);
    unsigned char send_trailer = 0, recv_trailer = 0;
    MPI_Datatype send_t = two_runs(send.data(), n, &send_trailer, 1), recv_t = two_runs(recv.data(), n, &recv_trailer, 1);
    MPI_Datatype split_t = two_runs(recv.data(), n - 1, &recv_trailer, 1);
    std::vector<std::vector<double>> samples(3);
    for (int r = 0; r < reps + 5; ++r)
      for (int v = 0; v < 3; ++v) {
        std::fill(recv.begin(), recv.end(), 0);
        MPI_Request req[2];
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (v == 0) {
          MPI_Irecv(recv.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[0]);
          MPI_Isend(send.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[1]);
        } else if (v == 1) {
          MPI_Irecv(MPI_BOTTOM, 1, recv_t, peer, 0, MPI_COMM_WORLD, &req[0]);
          MPI_Isend(MPI_BOTTOM, 1, send_t, peer, 0, MPI_COMM_WORLD, &req[1]);
        } else {
          MPI_Irecv(MPI_BOTTOM, 1, split_t, peer, 0, MPI_COMM_WORLD, &req[0]);
          MPI_Isend(send.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[1]);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        double dt = (MPI_Wtime() - t0) * 1e6, worst = 0;
        if (v == 2) recv[static_cast<std::size_t>(n - 1)] = recv_trailer;  // the split-off last byte
        for (int i = 0; i < n; ++i)
          if (recv[static_cast<std::size_t>(i)] != pattern(peer, i))
            die(std::string(names[v]) + ": byte " + std::to_string(i) + " of " + std::to_string(n) + " is wrong");
        MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 5) samples[static_cast<std::size_t>(v)].push_back(worst);
      }
    for (int v = 0; v < 3; ++v) {
      const cartplan::bench::Summary s = cartplan::bench::summarize(samples[static_cast<std::size_t>(v)]);
      if (rank == 0) std::printf("%d,%s,%.2f,%.2f,%.2f\n", n, names[v], s.median, s.q1, s.q3);
    }
    MPI_Type_free(&send_t);
    MPI_Type_free(&recv_t);
    MPI_Type_free(&split_t);
  }
  MPI_Finalize();
  return 0;
}
