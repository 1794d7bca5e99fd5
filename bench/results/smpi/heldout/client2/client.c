/* client.c: a held-out client of cartplan-smpi. Modes:
 *   halo D N G [ALGO]   : D-dim periodic torus, NxN(xN) interior doubles, ghost G, check every ghost cell
 *   a2a  D M [ALGO]     : Moore r=1 neighbourhood, Cart_alltoall_init with M ints per block, check all blocks
 *   bad                 : bad arguments with MPI_ERRORS_RETURN, print class + message
 * ALGO "auto" or anything given goes to Info cartplan_algorithm (omitted: MPI_INFO_NULL). */
#include <cartplan/cartplan_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

static double now(void) { return MPI_Wtime(); }

/* sync time: clock from last rank entering to last rank leaving; b2b: max per-rank time per call */
static void timing(const char* tag, const char* label, MPI_Comm comm, void (*one)(void*), void* ctx) {
  one(ctx); one(ctx); /* warm-up */
  MPI_Barrier(comm);
  double t0 = now(); one(ctx); double t1 = now();
  double in, out;
  MPI_Allreduce(&t0, &in, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&t1, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  const int K = 5;
  MPI_Barrier(comm);
  double b0 = now();
  for (int k = 0; k < K; ++k) one(ctx);
  double b = (now() - b0) / K, bmax;
  MPI_Allreduce(&b, &bmax, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (me == 0) printf("RESULT %s %-10s np=%d sync_us=%.3f b2b_us=%.3f\n", tag, label, np, (out - in) * 1e6, bmax * 1e6);
}

/* ---------------- halo ---------------- */
typedef struct { int D, N, G, E, dims[3], c[3], gl[3], mesh; long cells; double* u; Cart_Request req; } HaloCtx;

static double gval(HaloCtx* h, const int idx[]) {
  double v = 0;
  for (int k = 0; k < h->D; ++k) {
    int g = (h->c[k] * h->N + idx[k] - h->G + h->gl[k]) % h->gl[k];
    v = v * 1000.0 + g;
  }
  return v;
}
static void unflat(HaloCtx* h, long i, int idx[]) {
  for (int k = h->D - 1; k >= 0; --k) { idx[k] = (int)(i % h->E); i /= h->E; }
}
static int is_ghost(HaloCtx* h, const int idx[]) {
  for (int k = 0; k < h->D; ++k) if (idx[k] < h->G || idx[k] >= h->G + h->N) return 1;
  return 0;
}
static void fill(HaloCtx* h, double salt) {
  int idx[3];
  for (long i = 0; i < h->cells; ++i) { unflat(h, i, idx); h->u[i] = is_ghost(h, idx) ? -1.0 - salt : gval(h, idx) + salt; }
}
static int outside(HaloCtx* h, const int idx[]) {
  for (int k = 0; k < h->D; ++k) { if (k == 1) continue; int g = h->c[k] * h->N + idx[k] - h->G; if (g < 0 || g >= h->gl[k]) return 1; }
  return 0;
}
static long check(HaloCtx* h, double salt) {
  long bad = 0; int idx[3];
  for (long i = 0; i < h->cells; ++i) {
    unflat(h, i, idx);
    double want = h->mesh && outside(h, idx) ? -1.0 - salt : gval(h, idx) + salt;
    if (h->u[i] != want) {
      if (bad < 3) fprintf(stderr, "rank %d: cell %ld (%d,%d,%d) = %g, want %g\n", me, i, idx[0], idx[1], h->D > 2 ? idx[2] : 0, h->u[i], want);
      ++bad;
    }
  }
  return bad;
}
static void halo_one(void* p) { HaloCtx* h = p; Cart_start(&h->req); Cart_wait(&h->req); }

static int run_halo(int D, int N, int G, const char* algo) {
  HaloCtx h = {0}; h.D = D; h.N = N; h.G = G; h.E = N + 2 * G;
  h.mesh = getenv("CLIENT_MESH") != NULL;
  int periods[3] = {!h.mesh, 1, !h.mesh};
  MPI_Dims_create(np, D, h.dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, D, h.dims, periods, 0, &cart);
  MPI_Cart_coords(cart, me, D, h.c);
  for (int k = 0; k < D; ++k) h.gl[k] = h.dims[k] * N;
  h.cells = 1; for (int k = 0; k < D; ++k) h.cells *= h.E;
  h.u = malloc(sizeof(double) * h.cells);
  int interior[3] = {N, N, N}, ghost[3] = {G, G, G};
  MPI_Info info = MPI_INFO_NULL;
  if (algo) { MPI_Info_create(&info); MPI_Info_set(info, "cartplan_algorithm", algo); }
  if (getenv("CLIENT_MODEL_INFO")) { if (info == MPI_INFO_NULL) MPI_Info_create(&info); MPI_Info_set(info, "cartplan_cost_model", getenv("CLIENT_MODEL_INFO")); }
  Cart_Halo halo;
  Cart_halo_create(cart, D, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, info, &halo);
  long bad = 0;
  fill(&h, 0); Cart_halo_exchange(h.u, halo); bad += check(&h, 0);          /* blocking */
  Cart_halo_exchange_init(h.u, halo, MPI_INFO_NULL, &h.req);
  for (int it = 1; it <= 3; ++it) { fill(&h, 0.25 * it); halo_one(&h); bad += check(&h, 0.25 * it); } /* persistent, new data */
  char* json; Cart_halo_request_plan(h.req, &json);
  char alg[32] = "?"; const char* a = strstr(json, "\"algorithm\"");
  if (a) sscanf(a, "\"algorithm\": \"%31[^\"]", alg), (void)0;
  if (a && alg[0] == '?') sscanf(a, "\"algorithm\":\"%31[^\"]", alg);
  Cart_free_plan_json(json);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, cart);
  char tag[64]; snprintf(tag, sizeof tag, "halo d=%d n=%d g=%d", D, N, G);
  char label[64]; snprintf(label, sizeof label, "%s->%s", algo ? algo : "default", alg);
  if (me == 0) printf("CHECK %s %s dims=%dx%dx%d: %s (%ld bad cells)\n", tag, label, h.dims[0], h.dims[1], D > 2 ? h.dims[2] : 1, bad ? "FAILED" : "OK", bad);
  if (getenv("CLIENT_FREE_EARLY")) { Cart_halo_free(&halo); MPI_Comm_free(&cart); MPI_Comm_dup(MPI_COMM_WORLD, &cart); }
  timing(tag, label, cart, halo_one, &h);
  fill(&h, 9); halo_one(&h); long bad2 = check(&h, 9);
  MPI_Allreduce(MPI_IN_PLACE, &bad2, 1, MPI_LONG, MPI_SUM, cart);
  if (me == 0 && bad2) printf("CHECK after timing FAILED %ld\n", bad2);
  Cart_request_free(&h.req);
  if (!getenv("CLIENT_FREE_EARLY")) Cart_halo_free(&halo);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  MPI_Comm_free(&cart);
  free(h.u);
  return bad || bad2;
}

/* ---------------- alltoall ---------------- */
typedef struct { Cart_Request req; } A2ACtx;
static void a2a_one(void* p) { A2ACtx* a = p; Cart_start(&a->req); Cart_wait(&a->req); }
static int enc(int rank, int blk, int j) { return rank * 100000 + blk * 1000 + j % 1000; }

static int run_a2a(int D, int M, const char* algo) {
  int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, t;
  MPI_Dims_create(np, D, dims);
  Cart_neighbors_count(D, CART_CHEBYSHEV, 1, 1, &t);
  int* off = malloc(sizeof(int) * t * D);
  Cart_neighbors(D, CART_CHEBYSHEV, 1, 1, t, off);
  MPI_Comm cart;
  MPI_Info cinfo = MPI_INFO_NULL;
  if (getenv("CLIENT_MODEL_CREATE")) { MPI_Info_create(&cinfo); MPI_Info_set(cinfo, "cartplan_cost_model", getenv("CLIENT_MODEL_CREATE")); }
  Cart_neighborhood_create(MPI_COMM_WORLD, D, dims, periods, t, off, MPI_UNWEIGHTED, cinfo, 0, &cart);
  int cme; MPI_Comm_rank(cart, &cme);
  int* sb = malloc(sizeof(int) * t * M); int* rb = malloc(sizeof(int) * t * M);
  MPI_Info info = MPI_INFO_NULL;
  if (algo) { MPI_Info_create(&info); MPI_Info_set(info, "cartplan_algorithm", algo); }
  if (getenv("CLIENT_MODEL_INFO")) { if (info == MPI_INFO_NULL) MPI_Info_create(&info); MPI_Info_set(info, "cartplan_cost_model", getenv("CLIENT_MODEL_INFO")); }
  A2ACtx a;
  Cart_alltoall_init(sb, M, MPI_INT, rb, M, MPI_INT, cart, info, &a.req);
  long bad = 0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < t; ++i) for (int j = 0; j < M; ++j) sb[i * M + j] = enc(cme, i, j) + round;
    memset(rb, 0xff, sizeof(int) * t * M);
    a2a_one(&a);
    for (int i = 0; i < t; ++i) {
      int neg[3]; for (int k = 0; k < D; ++k) neg[k] = -off[i * D + k];
      int src; Cart_relative_rank(cart, neg, &src);
      for (int j = 0; j < M; ++j) if (rb[i * M + j] != enc(src, i, j) + round) {
        if (bad < 3) fprintf(stderr, "rank %d blk %d j %d got %d want %d\n", cme, i, j, rb[i * M + j], enc(src, i, j) + round);
        ++bad;
      }
    }
  }
  int comb = -1; Cart_request_algorithm(a.req, &comb);
  char* js; Cart_request_plan(a.req, &js);
  char alg[32] = "?"; const char* aa = strstr(js, "\"algorithm\"");
  if (aa) { aa = strchr(aa + 11, '"'); if (aa) sscanf(aa + 1, "%31[^\"]", alg); }
  Cart_free_plan_json(js);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, cart);
  char tag[64]; snprintf(tag, sizeof tag, "a2a moore d=%d m=%d", D, M);
  char label[64]; snprintf(label, sizeof label, "%s->%s", algo ? algo : "default", alg);
  if (me == 0) printf("CHECK %s %s t=%d: %s (%ld bad ints)\n", tag, label, t, bad ? "FAILED" : "OK", bad);
  timing(tag, label, cart, a2a_one, &a);
  Cart_request_free(&a.req);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  MPI_Comm_free(&cart);
  free(sb); free(rb); free(off);
  return bad != 0;
}

/* ---------------- bad arguments ---------------- */
static void report(const char* what, int rc) {
  char s[MPI_MAX_ERROR_STRING]; int l = 0, cls = -1;
  if (rc != MPI_SUCCESS) { MPI_Error_class(rc, &cls); MPI_Error_string(cls, s, &l); } else strcpy(s, "MPI_SUCCESS");
  if (me == 0) printf("BAD %-48s rc=%d class=%d (%s) msg=\"%s\"\n", what, rc, cls, s, Cart_error_message());
}

static int run_bad(void) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(np, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int in[3] = {8, 8, 8}, g[3] = {1, 1, 1}, big[3] = {9, 9, 9}, neg[3] = {-1, 1, 1};
  Cart_Halo h = CART_HALO_NULL;
  report("halo_create d=3 on a 2-D grid", Cart_halo_create(cart, 3, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create interior=NULL", Cart_halo_create(cart, 2, NULL, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create ghost_lo=NULL", Cart_halo_create(cart, 2, in, NULL, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create halo=NULL", Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, NULL));
  report("halo_create ghost 9 > interior 8", Cart_halo_create(cart, 2, in, big, big, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create ghost -1", Cart_halo_create(cart, 2, in, neg, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create MPI_DATATYPE_NULL", Cart_halo_create(cart, 2, in, g, g, MPI_DATATYPE_NULL, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create order=42", Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, 42, MPI_INFO_NULL, &h));
  report("halo_create MPI_COMM_WORLD (not cart)", Cart_halo_create(MPI_COMM_WORLD, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_create MPI_COMM_NULL", Cart_halo_create(MPI_COMM_NULL, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  MPI_Info info; MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "fastest");
  report("halo_create algorithm=fastest", Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, info, &h));
  MPI_Info_set(info, "cartplan_algorithm", "loground");
  report("halo_create algorithm=loground (collective-only)", Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, info, &h));
  MPI_Info_set(info, "cartplan_algorithm", "auto");
  MPI_Info_set(info, "cartplan_cost_model", "/nonexistent/model.json");
  report("halo_create cost_model=/nonexistent", Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, info, &h));
  if (h != CART_HALO_NULL) Cart_halo_free(&h);
  MPI_Info_free(&info);
  report("halo_create OK", Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h));
  report("halo_exchange array=NULL (all ranks)", Cart_halo_exchange(NULL, h));
  report("halo_exchange halo=CART_HALO_NULL", Cart_halo_exchange(malloc(800), CART_HALO_NULL));
  Cart_Request r = CART_REQUEST_NULL;
  report("halo_exchange_init request=NULL", Cart_halo_exchange_init(malloc(800), h, MPI_INFO_NULL, NULL));
  report("Cart_start(NULL request)", Cart_start(&r));
  report("Cart_wait(CART_REQUEST_NULL)", Cart_wait(&r));
  Cart_halo_free(&h);
  report("halo_free twice", Cart_halo_free(&h));

  /* collectives */
  int t = 4, off[8] = {1, 0, -1, 0, 0, 1, 0, -1};
  MPI_Comm nc;
  report("neighborhood_create d=3 dims of 2", Cart_neighborhood_create(MPI_COMM_WORLD, 3, dims, periods, t, off, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc));
  report("neighborhood_create offsets=NULL", Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc));
  int wrongdims[2] = {dims[0] + 1, dims[1] + 1};
  report("neighborhood_create dims product > np", Cart_neighborhood_create(MPI_COMM_WORLD, 2, wrongdims, periods, t, off, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc));
  report("neighborhood_create OK", Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, off, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc));
  MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
  int sb[40], rb[40]; double rd[40];
  for (int i = 0; i < 40; ++i) sb[i] = i;
  report("alltoall sendtype INT recvtype DOUBLE (same count)", Cart_alltoall(sb, 2, MPI_INT, rd, 2, MPI_DOUBLE, nc));
  report("alltoall sendcount 2 recvcount 3", Cart_alltoall(sb, 2, MPI_INT, rb, 3, MPI_INT, nc));
  report("alltoall sendbuf NULL", Cart_alltoall(NULL, 2, MPI_INT, rb, 2, MPI_INT, nc));
  report("alltoall MPI_IN_PLACE", Cart_alltoall(MPI_IN_PLACE, 2, MPI_INT, rb, 2, MPI_INT, nc));
  report("alltoall count -1", Cart_alltoall(sb, -1, MPI_INT, rb, -1, MPI_INT, nc));
  report("alltoall on plain MPI_Cart_create comm", Cart_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, cart));
  report("alltoall OK", Cart_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, nc));
  MPI_Comm_free(&nc);
  MPI_Comm_free(&cart);
  return 0;
}

static int run_fatal(int ret) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, in[3] = {8, 8, 8}, g[3] = {1, 1, 1};
  MPI_Dims_create(np, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  if (ret) MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  Cart_Halo h;
  int rc = Cart_halo_create(cart, ret ? 2 : 3, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h);
  int cls = 0; if (rc) MPI_Error_class(rc, &cls);
  printf("rank %d: Cart_halo_create rc=%d class=%d msg=\"%s\"\n", me, rc, cls, Cart_error_message());
  if (!rc) Cart_halo_free(&h);
  MPI_Comm_free(&cart);
  return 0;
}

/* mismatched element types on rank 0 only: halo fields (float instead of double) and alltoall (double instead of int) */
static int run_mism(int which) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, in[2] = {8, 8}, g[2] = {1, 1};
  MPI_Dims_create(np, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  int rc = 0;
  if (which == 0) {
    Cart_Halo h;
    Cart_halo_create(cart, 2, in, g, g, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &h);
    static double u[100], v[100];
    void* arrays[2] = {u, v};
    MPI_Datatype types[2] = {MPI_DOUBLE, me == 0 ? MPI_FLOAT : MPI_DOUBLE};
    rc = Cart_halo_exchange_fields(2, arrays, types, h);
    int cls0 = 0; if (rc) MPI_Error_class(rc, &cls0);
    if (rc || me < 2) printf("rank %d: rc=%d class=%d msg=\"%s\"\n", me, rc, cls0, Cart_error_message());
    Cart_halo_free(&h);
    MPI_Comm_free(&cart);
    return 0;
  } else {
    int off[8] = {1, 0, -1, 0, 0, 1, 0, -1};
    MPI_Comm nc;
    Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 4, off, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc);
    MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
    static double sb[16], rb[16];
    MPI_Datatype t = me == 0 ? MPI_DOUBLE : MPI_INT;
    rc = Cart_alltoall(sb, 2, t, rb, 2, t, nc);
    MPI_Comm_free(&nc);
  }
  int cls = 0; if (rc) MPI_Error_class(rc, &cls);
  if (rc || me < 2) printf("rank %d: rc=%d class=%d msg=\"%s\"\n", me, rc, cls, Cart_error_message());
  MPI_Comm_free(&cart);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int rc = 2;
  if (argc >= 5 && !strcmp(argv[1], "halo")) rc = run_halo(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc > 5 ? argv[5] : NULL);
  else if (argc >= 4 && !strcmp(argv[1], "a2a")) rc = run_a2a(atoi(argv[2]), atoi(argv[3]), argc > 4 ? argv[4] : NULL);
  else if (argc >= 2 && !strcmp(argv[1], "bad")) rc = run_bad();
  else if (argc >= 2 && !strcmp(argv[1], "fatal")) rc = run_fatal(0);
  else if (argc >= 3 && !strcmp(argv[1], "mism")) rc = run_mism(atoi(argv[2]));
  else if (argc >= 2 && !strcmp(argv[1], "ret")) rc = run_fatal(1);
  else if (me == 0) fprintf(stderr, "usage: client halo D N G [ALGO] | a2a D M [ALGO] | bad\n");
  MPI_Finalize();
  return rc;
}
