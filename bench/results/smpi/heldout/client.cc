// Held-out client: 3-D halo (Moore, depth k) through Cart_halo_* (blocking + persistent),
// and a persistent Cart_alltoall over a box d=3 neighbourhood; rank-dependent data checked.
#include <cartplan/cartplan_mpi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

static int g_fail = 0;
#define CK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { std::fprintf(stderr, "client: %s -> %d: %s\n", #call, rc_, Cart_error_message()); ++g_fail; } } while (0)

static double val(int rank, int gx, int gy, int gz, int it) { return rank * 1e6 + gx * 1e4 + gy * 1e2 + gz + it * 0.5; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = 8, k = 1, m = 4, iters = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--k")) k = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--m")) m = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  }
  int p = 0, wr = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1};
  MPI_Dims_create(p, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int me, c[3];
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 3, c);

  // ---- halo part
  const int L = n + 2 * k;
  auto idx = [&](int x, int y, int z) { return (size_t(x) * L + y) * L + z; };
  std::vector<double> u(size_t(L) * L * L);
  int interior[3] = {n, n, n}, gh[3] = {k, k, k};
  Cart_Halo halo = CART_HALO_NULL;
  CK(Cart_halo_create(cart, 3, interior, gh, gh, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo));
  char* js = nullptr;
  CK(Cart_halo_plan(halo, &js));
  std::string plan = js ? js : "";
  Cart_free_plan_json(js);
  auto fill = [&](int it) {
    for (int x = 0; x < L; ++x) for (int y = 0; y < L; ++y) for (int z = 0; z < L; ++z) {
      bool in = x >= k && x < k + n && y >= k && y < k + n && z >= k && z < k + n;
      u[idx(x, y, z)] = in ? val(me, c[0] * n + x - k, c[1] * n + y - k, c[2] * n + z - k, it) : -1.0;
    }
  };
  auto check = [&](int it, const char* what) {
    int bad = 0;
    for (int x = 0; x < L; ++x) for (int y = 0; y < L; ++y) for (int z = 0; z < L; ++z) {
      int g[3] = {c[0] * n + x - k, c[1] * n + y - k, c[2] * n + z - k}, nc[3], src;
      for (int d = 0; d < 3; ++d) { int G = dims[d] * n; g[d] = (g[d] + G) % G; nc[d] = g[d] / n; }
      MPI_Cart_rank(cart, nc, &src);
      double want = val(src, g[0], g[1], g[2], it);
      if (u[idx(x, y, z)] != want) { if (bad < 3) std::fprintf(stderr, "client: rank %d %s it %d cell %d,%d,%d = %g want %g\n", me, what, it, x, y, z, u[idx(x, y, z)], want); ++bad; }
    }
    g_fail += bad;
  };
  fill(0); CK(Cart_halo_exchange(u.data(), halo)); check(0, "halo blocking");
  Cart_Request hreq = CART_REQUEST_NULL;
  CK(Cart_halo_exchange_init(u.data(), halo, MPI_INFO_NULL, &hreq));
  double th = 0;
  for (int it = 1; it <= iters; ++it) {
    fill(it);
    MPI_Barrier(cart);
    double t0 = MPI_Wtime();
    CK(Cart_start(&hreq)); CK(Cart_wait(&hreq));
    th += MPI_Wtime() - t0;
    check(it, "halo persistent");
  }
  CK(Cart_request_free(&hreq));
  CK(Cart_halo_free(&halo));

  // ---- box d=3 alltoall on a cartplan communicator
  std::vector<int> off;
  for (int a = -1; a <= 1; ++a) for (int b = -1; b <= 1; ++b) for (int e = -1; e <= 1; ++e)
    if (a || b || e) { off.push_back(a); off.push_back(b); off.push_back(e); }
  const int t = int(off.size()) / 3;
  MPI_Comm nb;
  CK(Cart_neighborhood_create(MPI_COMM_WORLD, 3, dims, periods, t, off.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nb));
  int nme; MPI_Comm_rank(nb, &nme);
  std::vector<int> sb(size_t(t) * m), rb(size_t(t) * m);
  Cart_Request areq = CART_REQUEST_NULL;
  CK(Cart_alltoall_init(sb.data(), m, MPI_INT, rb.data(), m, MPI_INT, nb, MPI_INFO_NULL, &areq));
  int comb = -1; CK(Cart_request_algorithm(areq, &comb));
  double ta = 0;
  for (int it = 0; it < iters; ++it) {
    for (int i = 0; i < t; ++i) for (int j = 0; j < m; ++j) sb[size_t(i) * m + j] = nme * 100000 + i * 1000 + j * 10 + it;
    std::fill(rb.begin(), rb.end(), -7);
    MPI_Barrier(nb);
    double t0 = MPI_Wtime();
    CK(Cart_start(&areq)); CK(Cart_wait(&areq));
    ta += MPI_Wtime() - t0;
    for (int i = 0; i < t; ++i) {
      int from[3] = {-off[3 * i], -off[3 * i + 1], -off[3 * i + 2]}, src;
      CK(Cart_relative_rank(nb, from, &src));
      for (int j = 0; j < m; ++j)
        if (rb[size_t(i) * m + j] != src * 100000 + i * 1000 + j * 10 + it) { if (g_fail < 5) std::fprintf(stderr, "client: rank %d a2a block %d[%d] = %d\n", nme, i, j, rb[size_t(i) * m + j]); ++g_fail; }
    }
  }
  CK(Cart_request_free(&areq));
  MPI_Comm_free(&nb);

  double mx[2] = {th / iters * 1e6, ta / iters * 1e6}, gm[2];
  MPI_Reduce(mx, gm, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int tot = 0; MPI_Allreduce(&g_fail, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (wr == 0) {
    size_t a = plan.find("\"algorithm\"");
    std::printf("client: p %d dims %dx%dx%d n %d k %d m %d: halo plan %s, halo persistent max %.2f us; a2a box d=3 combining=%d max %.2f us; %s (%d bad)\n",
                p, dims[0], dims[1], dims[2], n, k, m, a == std::string::npos ? "?" : plan.substr(a, 30).c_str(), gm[0], comb, gm[1], tot ? "FAILED" : "OK", tot);
  }
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return tot ? 1 : 0;
}
