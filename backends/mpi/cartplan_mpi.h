/* cartplan's C API: Cartesian collective communication over isomorphic (stencil)
 * neighbourhoods, in the vocabulary of Träff & Hunold (ICPP 2019), Listings 1 and 2.
 *
 * Errors. Every function returns an MPI error class (MPI_SUCCESS on success) and, like MPI
 * functions, first calls the error handler of the communicator it concerns (the communicator
 * passed in; for request functions the request's communicator; MPI_COMM_SELF when there is
 * none). With the default MPI_ERRORS_ARE_FATAL an error aborts the job; set
 * MPI_ERRORS_RETURN to get the class back. Cart_error_message() describes the last error on
 * the calling thread. No C++ exception of cartplan's crosses this API (under SimGrid SMPI, the
 * exception SimGrid unwinds a killed rank with passes through, as it must: docs/smpi.md).
 *
 * Two checking modes.
 *  - Default: blocking and non-blocking collectives talk to their neighbours only: no global
 *    collective (allreduce, barrier, ...) after the first call with a given argument shape.
 *    Each rank checks its own arguments and returns its own error. A block whose size differs
 *    between neighbours is found from what arrives and returned as MPI_ERR_TRUNCATE on the
 *    rank that receives it. As in MPI, a call that is inconsistent across ranks (one rank
 *    passes bad arguments, or different sizes) is erroneous: other ranks may hang or fail.
 *    Exception: Cart_alltoallv/w with cartplan_algorithm=combining on a grid with a
 *    non-periodic dimension agree on every call (ranks may forward blocks they do not own and
 *    must learn their sizes); with auto they run the direct plan there, which needs nothing.
 *  - Checking (Info cartplan_check=collective at Cart_neighborhood_create or per _init, or the
 *    environment variable CARTPLAN_CHECK=collective): every collective call agrees across ranks
 *    with one MPI_Allreduce, so a bad argument on any rank makes every rank return the same
 *    error class instead of hanging. For debugging; it costs a global collective per call.
 *    Halo exchanges: the mode the halo was created with (Cart_halo_create, below).
 *  Cart_*_init and Cart_neighborhood_create are collective in both modes (as MPI-4 init).
 *
 * Ordering and progress. As for MPI-4 persistent and non-blocking collectives, every rank must
 * call the collectives of one communicator (blocking, Cart_i*, *_init and Cart_start) in the
 * same order; any number of requests may then be in flight together and completed in any
 * order, with any rank-dependent pattern of Cart_test and Cart_wait: they never exchange each
 * other's data. Combining plans run in phases, and a later phase can only be posted by cartplan
 * code once the previous one has arrived. Guarantee (default, Info cartplan_progress=any): a
 * pending request advances inside every MPI call the process makes, as MPI's own non-blocking
 * collectives do: inside Cart_* calls, which advance every pending cartplan request of the
 * process, and, with Open MPI, inside any other MPI call that waits or tests (MPI_Recv,
 * MPI_Probe, MPI_Ssend, MPI_Barrier, MPI_Allreduce, MPI_Wait* and MPI_Test* on the program's
 * own requests, ...), through a callback that Open MPI's progress engine runs while some request
 * still has a phase to post (backends/mpi/exchange_progress.cc). So a rank may block in any MPI
 * call whose completion depends on a peer's pending Cart_* request without deadlock. The
 * callback costs nothing on single-phase (direct) requests, which are never registered, and
 * about 270 instructions per multi-phase request (docs/dropin.md, "Progress"). Info cartplan_progress=
 * cartplan (per communicator or per _init), or CARTPLAN_PROGRESS=cartplan in the environment,
 * restricts progress to Cart_* calls; so does an MPI without Open MPI's progress callback
 * (SimGrid's SMPI): then a rank blocked in another MPI call does not advance its requests.
 *
 * Threads: with MPI_THREAD_MULTIPLE, calls on different communicators from different threads
 * are safe. Calls on one communicator must not run concurrently (as for MPI collectives).
 *
 * MPI_IN_PLACE is not allowed (neighbourhood collectives have no in-place form): MPI_ERR_ARG.
 * Messages may exceed INT_MAX bytes; the *_c forms take MPI_Count counts and MPI_Aint
 * displacements for blocks of more than INT_MAX elements.
 *
 * Buffers follow MPI's neighbourhood collectives: blocks in neighbourhood (offset) order,
 * block i goes to the process at +offset[i] and block i arrives from the process at
 * -offset[i]. On non-periodic dimensions a neighbour outside the mesh is MPI_PROC_NULL: the
 * block is neither sent nor received and its recv buffer is never written. For the v and w
 * variants block i must have the same size (type signature) on every rank; a size mismatch
 * is detected and returned as MPI_ERR_TRUNCATE. Arguments of blocks whose neighbour is
 * outside the mesh are not significant and never touched (count -1 and MPI_DATATYPE_NULL are
 * fine there).
 *
 *   MPI_Comm cart;
 *   int dims[2] = {4, 4}, periods[2] = {1, 1};
 *   int offsets[8] = {1,0, -1,0, 0,1, 0,-1};
 *   Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 4, offsets, MPI_UNWEIGHTED,
 *                            MPI_INFO_NULL, 0, &cart);
 *   Cart_Request req;
 *   Cart_alltoall_init(sendbuf, 10, MPI_DOUBLE, recvbuf, 10, MPI_DOUBLE, cart, MPI_INFO_NULL, &req);
 *   for (int it = 0; it < n; ++it) { Cart_start(&req); Cart_wait(&req); }
 *   Cart_request_free(&req);
 *   MPI_Comm_free(&cart);
 */
#ifndef CARTPLAN_MPI_H_
#define CARTPLAN_MPI_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A persistent or non-blocking Cartesian collective. */
typedef struct Cart_Request_s* Cart_Request;
#define CART_REQUEST_NULL ((Cart_Request)0)

/* Description of the last error returned on this thread (empty after a success). */
const char* Cart_error_message(void);

/* Collective: creates a Cartesian communicator (as MPI_Cart_create) carrying the neighbourhood
 * of t offsets (targetrelative holds t*d ints). Info keys (all of them, with their defaults and
 * environment variables: docs/info-keys.md):
 * cartplan_algorithm (auto|direct|combining|loground|hybrid), cartplan_dim_order (auto|natural|K,K,..),
 * cartplan_alpha_us, cartplan_beta_us_per_byte, cartplan_cost_model (path of a calibrated model
 * file written by bench/calibrate; the alpha/beta keys override it), cartplan_check
 * (none|collective, see above), cartplan_plan (path of a JSON plan, e.g. from `cartplan plan`,
 * Cart_request_plan or CARTPLAN_DUMP_PLANS, run instead of planning: MPI_ERR_INFO_VALUE if it
 * cannot be read or does not verify, MPI_ERR_ARG if its neighbourhood or, for a request, its
 * op is not the request's; the message names what differs), cartplan_tune (model|measure:
 * persistent init of alltoall/allgather with algorithm auto times the close candidates on
 * scratch memory and every rank runs the fastest; docs/cost-model.md "Measuring mode"), cartplan_progress
 * (any|cartplan, see "Ordering and progress" above), and the lowering's thresholds
 * cartplan_struct_min_bytes, cartplan_home_max_bytes, cartplan_trailer_min_bytes. Every rank must pass the same d, dims,
 * periods, offsets and Info keys (checked). Ranks beyond prod(dims) get MPI_COMM_NULL.
 * MPI_Comm_free(cartcomm) releases everything; MPI_Comm_dup(cartcomm) keeps the neighbourhood.
 * weights are accepted and ignored (no remapping). */
int Cart_neighborhood_create(MPI_Comm comm, int d, const int dims[], const int periods[], int t,
                             const int targetrelative[], const int* weights, MPI_Info info, int reorder,
                             MPI_Comm* cartcomm);

/* Local helpers (Listing 2). Outside a non-periodic mesh the rank is MPI_PROC_NULL. */
int Cart_relative_rank(MPI_Comm cartcomm, const int relative[], int* rank);
int Cart_relative_shift(MPI_Comm cartcomm, const int relative[], int* inrank, int* outrank);
/* Coordinates of `rank` relative to the calling process (rank's coords minus mine; on periodic
 * dimensions the representative in (-dims/2, dims/2]). */
int Cart_relative_coord(MPI_Comm cartcomm, int rank, int relative[]);
/* Ranks of n relative offsets (relative holds n*d ints), MPI_PROC_NULL outside the mesh. */
int Cart_allranks_relative(MPI_Comm cartcomm, int n, const int relative[], int ranks[]);
/* t = neighbourhood size; indegree/outdegree count sources/targets that exist (not MPI_PROC_NULL). */
int Cart_neighbor_count(MPI_Comm cartcomm, int* t);
int Cart_neighbor_degrees(MPI_Comm cartcomm, int* t, int* indegree, int* outdegree);
/* Sources (-offset[i]) and targets (+offset[i]) in neighbourhood order, MPI_PROC_NULL included;
 * weights may be MPI_UNWEIGHTED/NULL. maxin/maxout must be at least t. */
int Cart_neighbor_get(MPI_Comm cartcomm, int maxin, int sources[], int* sourceweights, int maxout, int targets[],
                      int* targetweights);
/* Like Cart_neighbor_get without MPI_PROC_NULL entries: ready for MPI_Dist_graph_create_adjacent
 * (indegree/outdegree from Cart_neighbor_degrees). */
int Cart_graph_get(MPI_Comm cartcomm, int maxin, int sources[], int maxout, int targets[]);

/* Stencil generators (seed 001, Listing 6): offsets with shadow <= distance <= depth, in
 * lexicographic order; metric CART_CHEBYSHEV (Moore) or CART_MANHATTAN (von Neumann). */
#define CART_CHEBYSHEV 1
#define CART_MANHATTAN 2
int Cart_neighbors_count(int d, int metric, int shadow, int depth, int* t);
int Cart_neighbors(int d, int metric, int shadow, int depth, int maxt, int relative[]);

/* Blocking collectives, with MPI_Neighbor_* signatures (displacements of -w in bytes). */
int Cart_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm cartcomm);
int Cart_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_allgatherw(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm cartcomm);

/* Non-blocking forms: complete with Cart_wait/Cart_test, which free the request (set it to
 * CART_REQUEST_NULL) like MPI_Wait does for non-persistent requests. Buffers must stay valid. */
int Cart_ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm cartcomm, Cart_Request* request);
int Cart_ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm cartcomm,
                    Cart_Request* request);
int Cart_ialltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm cartcomm, Cart_Request* request);
int Cart_iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm cartcomm, Cart_Request* request);
int Cart_iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm cartcomm, Cart_Request* request);
int Cart_iallgatherw(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm cartcomm, Cart_Request* request);

/* Persistent forms (MPI-4 semantics: buffers, counts and types are fixed at init). The Info
 * keys of Cart_neighborhood_create may override the algorithm for this request; they must be
 * the same on every rank. Start with Cart_start, complete with Cart_wait/Cart_test, release
 * with Cart_request_free (not while active). */
int Cart_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm cartcomm,
                         MPI_Info info, Cart_Request* request);
int Cart_allgatherw_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                         MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);

int Cart_start(Cart_Request* request);
int Cart_wait(Cart_Request* request);
int Cart_test(Cart_Request* request, int* flag);
int Cart_request_free(Cart_Request* request);
/* Array forms, as MPI_Startall/Waitall/Testall: Cart_startall checks every request before
 * starting any; Cart_waitall completes all and returns the first error; Cart_testall completes
 * the requests only when all are complete (*flag = 1). Halo codes start several fields together:
 *   Cart_Request fields[3] = {u_halo, v_halo, w_halo};
 *   Cart_startall(3, fields); compute_interior(); Cart_waitall(3, fields); */
int Cart_startall(int count, Cart_Request requests[]);
int Cart_waitall(int count, Cart_Request requests[]);
int Cart_testall(int count, Cart_Request requests[], int* flag);

/* Large-count forms (MPI-4 style): MPI_Count counts, MPI_Aint displacements, otherwise exactly
 * the functions above. Blocks may hold more than INT_MAX elements.
 *   Cart_alltoall_c(sb, (MPI_Count)1 << 31, MPI_BYTE, rb, (MPI_Count)1 << 31, MPI_BYTE, cart); */
int Cart_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm cartcomm);
int Cart_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     const MPI_Datatype recvtypes[], MPI_Comm cartcomm);
int Cart_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm cartcomm);
int Cart_allgatherw_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                      MPI_Comm cartcomm);
int Cart_ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm cartcomm, Cart_Request* request);
int Cart_ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                      void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                      MPI_Comm cartcomm, Cart_Request* request);
int Cart_ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      const MPI_Datatype recvtypes[], MPI_Comm cartcomm, Cart_Request* request);
int Cart_iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                      MPI_Datatype recvtype, MPI_Comm cartcomm, Cart_Request* request);
int Cart_iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm cartcomm,
                       Cart_Request* request);
int Cart_iallgatherw_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                       MPI_Comm cartcomm, Cart_Request* request);
int Cart_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm cartcomm, MPI_Info info,
                         Cart_Request* request);
int Cart_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm cartcomm, MPI_Info info,
                          Cart_Request* request);
int Cart_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm cartcomm, MPI_Info info,
                          Cart_Request* request);
int Cart_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                           MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_allgatherw_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);

/* Neighbourhood reductions and rooted collectives (seed 001 Sect. 2, seed 002 Sect. 4).
 * Every process names the same t offsets; "the sources" of X are the processes at X - offset[i]
 * (the zero offset is X itself, a duplicate offset counts as often as it appears, on meshes
 * absent sources contribute nothing).
 *  - Cart_allreduce: recvbuf = op over the sendbufs (count elements) of X's t sources.
 *  - Cart_reduce_scatter: sendbuf holds t blocks of count elements, block i goes to X + offset[i];
 *    recvbuf = op over the blocks that arrive (block i of the source at X - offset[i]).
 *  - Rooted (every rank passes the same root; data moves only within the root's neighbourhood):
 *    Cart_bcast: X receives the root's buffer if X - offset[i] = root for some i.
 *    Cart_gather: at the root, block i of recvbuf (t blocks) = sendbuf of root - offset[i].
 *    Cart_scatter: X receives block i of the root's sendbuf (t blocks) if X = root + offset[i];
 *    Cart_reduce: at the root, recvbuf = op over the sendbufs of the root's t sources.
 *  Single buffers: when several i name the root from X (small tori, duplicate offsets), the
 *  lowest such i delivers into Cart_bcast's buffer / Cart_scatter's recvbuf; the root's own
 *  Cart_bcast buffer is never written.
 *  A process none of whose sources exists keeps its recv buffer untouched (no identity element
 *  is written), as MPI_Neighbor_allgather leaves blocks of MPI_PROC_NULL neighbours alone;
 *  likewise recvbuf of a rooted op on a process the root's neighbourhood does not reach.
 *  Ops: predefined MPI_Ops and user ops created commutative (MPI_Op_create(fn, 1, &op)); a
 *  non-commutative op is refused with MPI_ERR_OP. Combining plans reduce while they route, in
 *  an order that differs from a loop over the neighbours: floating-point results may differ
 *  from such a loop in the last bits. An op the datatype does not support is reported by
 *  MPI_Reduce_local itself (Open MPI: through MPI_COMM_WORLD's error handler).
 *  A bad root is MPI_ERR_ROOT; in checking mode roots that differ between ranks are too.
 *  Arguments MPI calls not significant (recvbuf of gather/reduce and sendbuf of scatter away from
 *  the root) are never looked at. MPI_IN_PLACE is refused (MPI_ERR_ARG). In the SimGrid SMPI build,
 *  whose bounds for derived datatypes are wrong, these calls take predefined datatypes only (a
 *  derived one with a count above 0 is MPI_ERR_TYPE; docs/smpi.md). */
int Cart_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm cartcomm);
int Cart_reduce_scatter(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm cartcomm);
int Cart_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm cartcomm);
int Cart_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm cartcomm);
int Cart_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm cartcomm);
int Cart_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm cartcomm);
int Cart_iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm cartcomm,
                    Cart_Request* request);
int Cart_ireduce_scatter(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm cartcomm, Cart_Request* request);
int Cart_ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm cartcomm, Cart_Request* request);
int Cart_igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm cartcomm, Cart_Request* request);
int Cart_iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm cartcomm, Cart_Request* request);
int Cart_ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm cartcomm, Cart_Request* request);
int Cart_allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_reduce_scatter_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm cartcomm, MPI_Info info,
                    Cart_Request* request);
int Cart_gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
/* Large-count forms of the eighteen functions above. */
int Cart_allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm cartcomm);
int Cart_reduce_scatter_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm cartcomm);
int Cart_bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm cartcomm);
int Cart_gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm cartcomm);
int Cart_scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm cartcomm);
int Cart_reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm cartcomm);
int Cart_iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm cartcomm, Cart_Request* request);
int Cart_ireduce_scatter_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm cartcomm, Cart_Request* request);
int Cart_ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm cartcomm,
                  Cart_Request* request);
int Cart_igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm cartcomm, Cart_Request* request);
int Cart_iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm cartcomm, Cart_Request* request);
int Cart_ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                   MPI_Comm cartcomm, Cart_Request* request);
int Cart_allreduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_reduce_scatter_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);
int Cart_bcast_init_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm cartcomm, MPI_Info info,
                      Cart_Request* request);
int Cart_gather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm cartcomm, MPI_Info info,
                       Cart_Request* request);
int Cart_scatter_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm cartcomm, MPI_Info info,
                        Cart_Request* request);
int Cart_reduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm cartcomm, MPI_Info info, Cart_Request* request);

/* The algorithm a request runs: 0 direct, 1 combining (for tests and tools). */
int Cart_request_algorithm(Cart_Request request, int* combining);

/* The plan a request runs, as the canonical JSON text of `cartplan plan` and `cartplan verify`
 * (schema cartplan.plan/1, /2 or /3; no ranks or addresses: the same text on every rank). *json
 * receives a NUL-terminated string that the caller releases with Cart_free_plan_json. Local.
 * Errors: MPI_ERR_REQUEST for a NULL request, MPI_ERR_ARG for json NULL. Such a file can be
 * given back with the Info key cartplan_plan. The environment variable
 * CARTPLAN_DUMP_PLANS=DIR writes every new plan a process runs to DIR once, as
 * cartplan-OP-ALGORITHM-FINGERPRINT.json (the fingerprint is a hash of the text); a process
 * that cannot write there says so once on stderr and runs its calls as without the variable. */
int Cart_request_plan(Cart_Request request, char** json);
/* The program a request runs on this rank: the plan lowered for this rank's buffers (peers,
 * messages over byte segments, packing, staging, local copies), as the JSON of
 * `cartplan lower --format json` (format cartplan.program/2). Differs between ranks. Release
 * with Cart_free_plan_json. Local; errors as for Cart_request_plan. */
int Cart_request_program(Cart_Request request, char** json);
/* Releases a string returned by Cart_request_plan or Cart_request_program; NULL is ignored. */
void Cart_free_plan_json(char* json);

/* ---------------------------------------------------------------------------------------
 * Graph collectives on any distributed-graph communicator (docs/graphs-mpi.md, issue 32).
 *
 * comm is a communicator made by Cart_graph_comm_create_adjacent (below), MPI_Dist_graph_create_adjacent
 * or MPI_Dist_graph_create:
 * each rank names its own sources and destinations, duplicates and self edges allowed. The
 * functions have MPI_Neighbor_allgather / MPI_Neighbor_alltoall's signatures (and their v and w
 * forms, below) and deliver exactly what those deliver: blocks in the order MPI_Dist_graph_neighbors returns, send block
 * k (alltoall) to destination k, recv block j from source j, and when a rank lists another
 * several times the k-th edge between them carries the k-th block (MPI's k-th edge rule).
 * Algorithms (Info cartplan_algorithm): linear (one message per edge, what MPI libraries do),
 * pairing (seed 003, Mirsadeghi et al.: ranks sharing at least cartplan_theta destinations pair
 * up and each sends the pair's blocks to half of them) and cumulative (pairing iterated so that
 * a destination is combined again), and grid (the ranks laid out on a 2-dimensional virtual
 * grid, MPI_Dims_create's factors of the communicator's size, a block routed one grid dimension
 * per phase, everything for one partner in a phase in one message); auto (default) prices all
 * four with the cost model and runs a combining one only if it is predicted at least 10 %
 * cheaper than linear.
 * Info keys: cartplan_algorithm (auto|linear|pairing|cumulative|grid), cartplan_theta (integer >= 1,
 * default 4), cartplan_progress (any|cartplan), cartplan_check (none|collective, default
 * CARTPLAN_CHECK). The blocking and non-blocking forms read them from the Info given to
 * MPI_Dist_graph_create_adjacent (MPI_Comm_get_info); _init's Info overrides them per request
 * and must be the same on every rank (checked). Checking mode (cartplan_check=collective at
 * creation, the same on every rank): every blocking and non-blocking call agrees across ranks
 * before it sends (errors and, for allgather and alltoall, one block size) and after building,
 * so a bad argument or a failed set-up on any rank fails the call on every rank (the others'
 * message names another rank) instead of leaving its peers waiting; a non-blocking call is then
 * not local. For debugging, as for the Cartesian calls.
 *
 * Collective set-up: the first graph collective on a communicator creates cartplan's state
 * there (one MPI_Comm_dup); a combining algorithm first builds its pattern by messages among
 * neighbours and friends only (seed 003's construction), once per communicator and theta (grid:
 * by messages along every rank's grid lines, with every rank of the communicator, once); auto
 * also agrees once on a price table (one MPI_Allreduce). After that blocking and non-blocking
 * calls talk to neighbours only (and, in combining schedules, to their pairing partners). Each
 * _init makes two MPI_Allreduce of its own: one on its arguments (errors, algorithm, theta, block
 * size, a free lane; in a communicator's first graph collective also the state's creation), so
 * a bad argument on any rank fails init on every rank, and one on its outcome (a datatype copy,
 * a pattern construction or a v form's size pass that failed on some rank fails init on every
 * rank). An auto _init that agrees auto's table carries the outcome in the table's MPI_Allreduce
 * instead (one of its own), unless a v or w form picks a combining schedule or the picked
 * exchange's temp slots were over the budget for making it before the pick.
 *
 * Block sizes: the combining algorithms forward other ranks' blocks, so every rank must use
 * one block size (sendcount x sendtype = recvcount x recvtype everywhere; a rank where the two
 * differ gets MPI_ERR_ARG). _init checks it across ranks: where sizes differ between ranks (as
 * MPI allows, edge by edge) auto runs linear and a forced combining algorithm fails with
 * MPI_ERR_ARG on every rank. Blocking and non-blocking calls find a mismatch on arrival
 * (MPI_ERR_TRUNCATE on the receiving rank). Temp slots travel as bytes (homogeneous systems).
 * Grid relays blocks through any rank, also ranks without edges. At _init those relay blocks of
 * the size the ranks with edges agreed on (their own counts are not looked at, as in MPI), and v
 * and w forms learn every relayed block's size in their size pass, so auto may pick grid at
 * _init; blocking and non-blocking calls choose from their own sizes, so their auto never picks
 * grid. There a rank without edges relays blocks of its own sendcount x sendtype (else recvcount
 * x recvtype). Forced by cartplan_algorithm=grid, grid is run on every form: the caller
 * guarantees one size on every rank with edges, and for blocking and non-blocking calls on the
 * ranks without edges too (_init checks the ranks with edges and fails with MPI_ERR_ARG on every
 * rank otherwise).
 *
 * Errors: MPI_ERR_COMM (MPI_COMM_NULL), MPI_ERR_TOPOLOGY (not a distributed graph),
 * MPI_ERR_COUNT (negative count), MPI_ERR_TYPE (MPI_DATATYPE_NULL), MPI_ERR_BUFFER (a block at
 * NULL with data whose datatype's true lower bound is 0: MPI_BOTTOM with absolute addresses, in
 * the datatype or as a v or w form's displacements, is valid), MPI_ERR_ARG (MPI_IN_PLACE, sizes as above), MPI_ERR_INFO_VALUE (bad Info value, or
 * values differing between ranks at _init), MPI_ERR_REQUEST (NULL request). Arguments of a side
 * this rank does not use (sendtype with no destinations, recvtype with no sources) are not
 * looked at. Requests are completed and freed with Cart_wait/Cart_test/Cart_request_free and
 * the array forms, like Cartesian ones, and may be in flight together with them.
 *
 *   int src[2] = {left, right}, dst[2] = {left, right};
 *   MPI_Info info; MPI_Info_create(&info); MPI_Info_set(info, "cartplan_theta", "2");
 *   MPI_Comm g;
 *   MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED,
 *                                  info, 0, &g);
 *   double mine[4], theirs[2 * 4];
 *   Cart_graph_neighbor_allgather(mine, 4, MPI_DOUBLE, theirs, 4, MPI_DOUBLE, g);   // blocking
 *   Cart_Request req;
 *   Cart_graph_neighbor_alltoall_init(out, 4, MPI_DOUBLE, in, 4, MPI_DOUBLE, g, info, &req);
 *   for (int it = 0; it < n; ++it) { Cart_start(&req); compute(); Cart_wait(&req); }
 *   Cart_request_free(&req);
 *   MPI_Info_free(&info); MPI_Comm_free(&g);
 * --------------------------------------------------------------------------------------- */
/* A communicator for the graph collectives, also where MPI has no distributed graphs (SimGrid's
 * SMPI 3.32 declares MPI_Dist_graph_create_adjacent but aborts in it). Collective over comm.
 * With Open MPI (Info cartplan_graph_comm = auto, the default, or dist_graph) it is
 * MPI_Dist_graph_create_adjacent(comm, indegree, sources, MPI_UNWEIGHTED, outdegree,
 * destinations, MPI_UNWEIGHTED, info, 0, graphcomm): a real distributed graph, MPI_Neighbor_*
 * work on it too. Under SMPI (auto) or with cartplan_graph_comm = attribute it duplicates comm
 * and attaches the lists and a copy of info to the duplicate: Cart_graph_* read them from there
 * (the same blocks, k-th edge rule, parallel and self edges as on a distributed graph), while
 * MPI's own topology functions see no topology (MPI_Topo_test gives MPI_UNDEFINED).
 * MPI_Comm_dup of the result copies the lists; MPI_Comm_free frees them. The lists are kept in
 * the caller's order, unweighted, ranks never reordered.
 * Both ways first check, with one MPI_Allreduce (so every rank returns the same class):
 * MPI_ERR_COMM (MPI_COMM_NULL, intercommunicator), MPI_ERR_ARG (negative degree, NULL array with
 * entries, NULL graphcomm), MPI_ERR_RANK (an entry outside [0, size); MPI_PROC_NULL is refused,
 * a distributed graph names ranks only), MPI_ERR_INFO_VALUE (cartplan_graph_comm not auto,
 * dist_graph or attribute), MPI_ERR_UNSUPPORTED_OPERATION (dist_graph under SMPI); then, with a
 * second MPI_Allreduce, MPI_ERR_TOPOLOGY when the ranks' lists are not one graph (an edge a -> b
 * listed a different number of times among a's destinations and b's sources; compared by a
 * 64-bit hash of the edge multisets). A rank whose own arguments are fine is told which rank's
 * were not (Cart_error_message()). The other Info keys (cartplan_algorithm, _theta, _progress)
 * are read by the first graph collective, as on a distributed graph.
 *
 *   int src[2] = {left, right}, dst[2] = {left, right};
 *   MPI_Comm g;
 *   Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, src, 2, dst, MPI_INFO_NULL, &g);
 *   Cart_graph_neighbor_allgather(mine, 4, MPI_DOUBLE, theirs, 4, MPI_DOUBLE, g);
 *   MPI_Comm_free(&g); */
int Cart_graph_comm_create_adjacent(MPI_Comm comm, int indegree, const int sources[], int outdegree, const int destinations[],
                                    MPI_Info info, MPI_Comm* graphcomm);
int Cart_graph_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                  MPI_Datatype recvtype, MPI_Comm comm);
int Cart_graph_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                 MPI_Datatype recvtype, MPI_Comm comm);
/* Non-blocking: completed and freed by Cart_wait/Cart_test (buffers must stay valid until then). */
int Cart_graph_ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                   MPI_Datatype recvtype, MPI_Comm comm, Cart_Request* request);
int Cart_graph_ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                  MPI_Datatype recvtype, MPI_Comm comm, Cart_Request* request);
/* Persistent (MPI-4 semantics, collective): start with Cart_start, complete with Cart_wait/Cart_test. */
int Cart_graph_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       Cart_Request* request);
int Cart_graph_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      Cart_Request* request);
/* v forms, with MPI_Neighbor_allgatherv / alltoallv's signatures (counts and displacements in
 * elements of the datatype, one per edge in MPI_Dist_graph_neighbors order). Blocks may differ
 * in size; the two ends of an edge must agree. A combining schedule first learns the size of
 * every block it forwards by a pass along its own edges (one 64-bit size per block and message,
 * no global collective): per call for the blocking and non-blocking forms (the non-blocking
 * ones inside the request's progress: they return without waiting for peers), once for _init.
 * Blocking and non-blocking calls with cartplan_algorithm=auto run linear (choosing alike would
 * need every rank's sizes); _init agrees on the largest block and may combine. Counts that
 * differ between the ends of an edge: MPI_ERR_TRUNCATE on the receiving rank (blocking,
 * non-blocking; every rank still runs the whole schedule), on every rank at _init (one more
 * MPI_Allreduce when it runs a combining algorithm). NULL counts or displacement arrays on a
 * rank with edges on that side: MPI_ERR_ARG.
 *   Cart_graph_neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, g); */
int Cart_graph_neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int Cart_graph_neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                  MPI_Comm comm);
int Cart_graph_ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    Cart_Request* request);
int Cart_graph_ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                   MPI_Comm comm, Cart_Request* request);
int Cart_graph_neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Info info, Cart_Request* request);
int Cart_graph_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, Cart_Request* request);
/* The w form, with MPI_Neighbor_alltoallw's signature: edge k (MPI_Dist_graph_neighbors order)
 * has its own count and datatype, and its displacement is in bytes from the buffer. The types
 * of the two ends of an edge need equal type signatures only (a vector may be received as a
 * subarray). A combining schedule forwards a block through other ranks as the bytes of its
 * type signature: MPI packs it with the origin's type and the target unpacks it with its own,
 * so intermediates never see the user's types; they learn each block's size by the same size
 * pass as the v forms (per call for blocking and non-blocking, once for _init; auto runs
 * linear for blocking and non-blocking calls). Errors as for alltoallv, plus MPI_ERR_TYPE
 * naming sendtypes[k] or recvtypes[j] (MPI_DATATYPE_NULL or invalid, even for an empty block);
 * NULL count, displacement or type arrays on a rank with edges on that side: MPI_ERR_ARG.
 *
 *   double a[n][ld], halo[2 * n];             // destinations and sources: 2 each
 *   MPI_Datatype col;  MPI_Type_vector(n, 1, ld, MPI_DOUBLE, &col);  MPI_Type_commit(&col);
 *   int sc[2] = {1, n}, rc[2] = {n, n};        // column 0 to destination 0, row 1 to destination 1
 *   MPI_Aint sd[2] = {0, ld * sizeof(double)}, rd[2] = {0, n * sizeof(double)};
 *   MPI_Datatype st[2] = {col, MPI_DOUBLE}, rt[2] = {MPI_DOUBLE, MPI_DOUBLE};
 *   Cart_graph_neighbor_alltoallw_init(a, sc, sd, st, halo, rc, rd, rt, g, MPI_INFO_NULL, &req);
 *   for (int it = 0; it < n_it; ++it) { Cart_start(&req); Cart_wait(&req); } */
int Cart_graph_neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int Cart_graph_ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   Cart_Request* request);
int Cart_graph_neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                       MPI_Info info, Cart_Request* request);
/* Large-count forms of the graph collectives (MPI-4's MPI_Neighbor_*_c): MPI_Count counts and
 * MPI_Aint displacements, otherwise exactly the functions above. A block may hold more than INT_MAX
 * elements (a combining schedule forwards such a block only if its datatype is contiguous; any
 * other: MPI_ERR_COUNT); a displacement may be an absolute address with MPI_BOTTOM as the buffer
 * (as in every v and w form). A count or displacement whose product with the datatype's size or
 * extent overflows 64 bits: MPI_ERR_COUNT or MPI_ERR_ARG naming it.
 *   MPI_Count rc[2] = {(MPI_Count)3 << 30, 8};  MPI_Aint rd[2] = {0, (MPI_Aint)3 << 30};
 *   Cart_graph_neighbor_allgatherv_c(mine, mycount, MPI_BYTE, theirs, rc, rd, MPI_BYTE, g); */
int Cart_graph_neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int Cart_graph_neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int Cart_graph_neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                     MPI_Comm comm);
int Cart_graph_neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                    MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int Cart_graph_neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int Cart_graph_ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, Cart_Request* request);
int Cart_graph_ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, Cart_Request* request);
int Cart_graph_ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                      MPI_Comm comm, Cart_Request* request);
int Cart_graph_ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, Cart_Request* request);
int Cart_graph_ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                     Cart_Request* request);
int Cart_graph_neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         Cart_Request* request);
int Cart_graph_neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        Cart_Request* request);
int Cart_graph_neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, Cart_Request* request);
int Cart_graph_neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                         MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                         const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         Cart_Request* request);
int Cart_graph_neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                         const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                         MPI_Info info, Cart_Request* request);
/* The algorithm a graph request runs (local): CART_GRAPH_LINEAR, _PAIRING, _CUMULATIVE or _GRID.
 * MPI_ERR_REQUEST for a Cartesian request (Cart_request_plan and Cart_request_program refuse
 * graph requests likewise). */
#define CART_GRAPH_LINEAR 0
#define CART_GRAPH_PAIRING 1
#define CART_GRAPH_CUMULATIVE 2
#define CART_GRAPH_GRID 3
int Cart_graph_request_algorithm(Cart_Request request, int* algorithm);
/* The number of dimensions of the virtual grid a CART_GRAPH_GRID request routes through (local):
 * 1 to 30 (grid_dims(p, d) with Info cartplan_grid_dims or auto's choice of d, docs/graphs.md);
 * 0 for the other algorithms and for a grid at p = 1. MPI_ERR_REQUEST for a Cartesian request,
 * MPI_ERR_ARG for a NULL argument.
 *   int algorithm, ndims;
 *   Cart_graph_request_algorithm(req, &algorithm);
 *   if (algorithm == CART_GRAPH_GRID) Cart_graph_request_grid_dims(req, &ndims);   // 2, 3, 4, ... */
int Cart_graph_request_grid_dims(Cart_Request request, int* ndims);

/* ---------------------------------------------------------------------------------------
 * Datatype helpers (backends/mpi/triangle.cc).
 *
 * Triangular submatrix datatypes, the layout MPI has no constructor for (seed 002, Sect. 8):
 * the corner blocks of a 5-point stencil with a halo of depth k >= 2 are triangles of
 * k(k-1)/2 cells. The triangle lies in an order x order submatrix of a row-major matrix with
 * ld elements per row (ld >= order); element (i, j) of the submatrix is at displacement
 * (i * ld + j) * extent(oldtype) from the type's origin, and the diagonal is included, so the
 * type holds order * (order + 1) / 2 elements. kind names which triangle:
 *   CART_TRIANGLE_LOWER       j <= i              (right angle at the lower left)
 *   CART_TRIANGLE_UPPER       j >= i              (right angle at the upper right)
 *   CART_TRIANGLE_LOWER_ANTI  i + j >= order - 1  (below the anti-diagonal, lower right)
 *   CART_TRIANGLE_UPPER_ANTI  i + j <= order - 1  (above the anti-diagonal, upper left)
 * Elements are in row-major order; lower bound and extent are those of the equivalent
 * MPI_Type_indexed (its first and last element). order 0 gives an empty type. The new type is
 * not committed. Returns MPI_ERR_ARG for a negative order, ld < order, an unknown kind, a
 * layout whose displacements overflow int, or newtype NULL; MPI_ERR_TYPE for oldtype
 * MPI_DATATYPE_NULL; else what MPI_Type_indexed returns. Errors go to MPI_COMM_SELF's error
 * handler and Cart_error_message() names the bad argument, as for every function here.
 * Local (no communication).
 * --------------------------------------------------------------------------------------- */
#define CART_TRIANGLE_LOWER 1
#define CART_TRIANGLE_UPPER 2
#define CART_TRIANGLE_LOWER_ANTI 3
#define CART_TRIANGLE_UPPER_ANTI 4
int Cart_type_create_triangle(int order, int ld, int kind, MPI_Datatype oldtype, MPI_Datatype* newtype);

/* ---------------------------------------------------------------------------------------
 * Halo exchanges from an array description (issue 33; backends/mpi/halo.cc, docs/halo.md).
 *
 * A halo describes one local array of d dimensions: interior[k] cells per dimension, ghost_lo[k]
 * and ghost_hi[k] ghost cells below and above it, elements of
 * elemtype, in order MPI_ORDER_C (the last dimension varies fastest) or MPI_ORDER_FORTRAN.
 * Dimension k of the array is dimension k of the communicator's grid; the array holds
 * prod(ghost_lo[k] + interior[k] + ghost_hi[k]) elements, the first interior cell at
 * (ghost_lo[0], .., ghost_lo[d-1]).
 *
 * Which ghost cells are filled. A ghost cell's sign vector has, per dimension, -1 below the
 * interior, 0 inside, +1 above. The cell is filled iff its sign vector is an offset of the
 * neighbourhood and its source exists: the process at self + sign vector (periodic wrap, or
 * inside the mesh), its cell x - sign vector * interior (below the interior, the source's
 * interior extent; above it, this rank's). No other cell is ever written (ghost
 * cells without a source in the mesh keep their values; the interior is only read). The
 * neighbourhood comes from the communicator:
 *  - a cartplan communicator (Cart_neighborhood_create): its offsets whose coordinates are all
 *    in -1..1 (faces, edges, corners); other offsets name no ghost region and are ignored, and
 *    a neighbourhood with none is MPI_ERR_ARG;
 *  - a plain MPI_Cart_create communicator: every region (faces, edges and corners: the Moore
 *    stencil, 3^d - 1 offsets), or the stencil Info cartplan_stencil names (a SPEC of
 *    `cartplan plan`: "vonneumann:d=3,r=1" fills the faces only, "offsets:1,0;-1,0" ...).
 * Deep halos are wide ghosts: ghost width 3 with the Moore stencil fills the 3-deep shell. A
 * ghost side some offset fills may be at most as wide as the interior (its cells come from the
 * neighbour's interior).
 *
 * Interiors may differ between ranks as a block decomposition of a global array makes them
 * differ: interior[k] may depend on the rank's coordinate in dimension k only (e.g. 100 cells
 * over 3 ranks: 34, 33, 33). Every rank then plans its own array with the algorithm and
 * dimension order chosen on the largest extents (two more MPI_Allreduce at creation); any other
 * difference is MPI_ERR_ARG naming the dimension and coordinate. Cart_halo_plan returns the
 * rank's own plan.
 *
 * Cart_halo_create is collective over cartcomm: every rank must pass the same d, widths,
 * element size, order and Info (checked: one agreement, MPI_ERR_ARG naming the
 * description where they differ); it plans the exchange (engine/halo/choose.h: direct,
 * combining, dimwise, split or hybrid, whichever the cost model predicts fastest on this grid;
 * Info cartplan_algorithm = auto|direct|combining|dimwise|split|hybrid forces one; dimwise only
 * for stencils whose regions' prefixes are in the stencil, like Moore and von Neumann) and
 * builds two private communicators, so that the halo does not depend on cartcomm staying
 * alive. Errors of the halo and its requests go to the error handler cartcomm had at creation.
 * Errors: MPI_ERR_COMM (MPI_COMM_NULL), MPI_ERR_TOPOLOGY (not Cartesian), MPI_ERR_DIMS (d is
 * not the grid's dimension count, or outside 1..8), MPI_ERR_ARG (NULL arrays, extents below 1,
 * negative widths, a ghost side wider than the interior it is filled from, a bad order, a
 * forced algorithm that does not fit the stencil, descriptions that differ, interiors that are
 * no block decomposition), MPI_ERR_TYPE
 * (MPI_DATATYPE_NULL or an empty type), MPI_ERR_INFO_VALUE. Every rank returns the same class.
 *
 * Cart_halo_exchange fills the ghost cells of `array` (blocking). No collective: it talks to
 * neighbours only, except in checking mode (Info cartplan_check=collective at Cart_halo_create,
 * else a cartplan communicator's mode or CARTPLAN_CHECK; agreed at creation): then every blocking
 * exchange of the halo first agrees in one MPI_Allreduce (on the halo's private communicator) on
 * errors and on the fields' number and element sizes, and a bad argument, a mismatch or a
 * failure to build the exchange (MPI_ERR_NO_MEM) on any rank is the same error class on every
 * rank (MPI_ERR_TRUNCATE for fields that differ), with nothing sent, except a NULL halo handle
 * (CART_HALO_NULL), refused at once as at init. Messages are MPI subarray datatypes over the
 * array itself (zero copies by cartplan; combining and split plans stage cells in transit in
 * cartplan's temps). The last few arrays' datatypes are kept, so alternating between arrays
 * costs nothing extra. As for MPI collectives, every rank calls it (default mode: bad arguments
 * on one rank only make the others wait).
 * Cart_halo_exchange_init makes a persistent request for `array` (collective, as MPI-4 init:
 * one agreement), started and completed with Cart_start/Cart_startall and Cart_wait/Cart_test
 * like any Cart_Request, freed with Cart_request_free. Its Info takes cartplan_tune
 * (model|measure; default the halo's, set by Info cartplan_tune at Cart_halo_create, a cartplan
 * communicator's mode or CARTPLAN_TUNE): with measure, on a halo planned with algorithm auto,
 * init times the planner's close candidates (direct, combining, dimwise ...) on scratch arrays,
 * never writing `array`, and the request runs the fastest, the same on every rank (one agreement
 * before the trials, one MPI_Allreduce per trial run; nothing per start; docs/halo.md). The
 * *_fields forms exchange `count` arrays of the halo's layout, of one or several element types,
 * with one set of messages (u, v, w and p together). Cart_halo_free releases the halo (requests made from it
 * stay valid until freed). Cart_halo_plan gives the plan's canonical JSON (schema
 * cartplan.halo_plan/1, as `cartplan halo plan` prints it; release with Cart_free_plan_json).
 * Cart_request_plan, _program and _algorithm refuse halo requests (MPI_ERR_REQUEST); a
 * persistent halo request's plan is Cart_halo_request_plan's.
 *
 *   int interior[2] = {64, 64}, ghost[2] = {2, 2};
 *   double* u = calloc(68 * 68, sizeof(double));
 *   Cart_Halo halo;
 *   Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo);
 *   Cart_halo_exchange(u, halo);                      // fills u's ghost cells
 *   Cart_Request req;
 *   Cart_halo_exchange_init(u, halo, MPI_INFO_NULL, &req);
 *   for (int it = 0; it < n; ++it) { Cart_start(&req); compute_interior(u); Cart_wait(&req); }
 *   Cart_request_free(&req);
 *   Cart_halo_free(&halo);
 * --------------------------------------------------------------------------------------- */
typedef struct Cart_Halo_s* Cart_Halo;
#define CART_HALO_NULL ((Cart_Halo)0)
int Cart_halo_create(MPI_Comm cartcomm, int d, const int interior[], const int ghost_lo[], const int ghost_hi[],
                     MPI_Datatype elemtype, int order, MPI_Info info, Cart_Halo* halo);
int Cart_halo_exchange(void* array, Cart_Halo halo);
int Cart_halo_exchange_init(void* array, Cart_Halo halo, MPI_Info info, Cart_Request* request);
/* Non-blocking: starts the exchange of `array` and returns at once; the ghost cells are filled
 * when Cart_wait (or a Cart_test that sets flag) completes *request, which frees it and sets it
 * to CART_REQUEST_NULL, as MPI does for non-blocking requests. Until then the array must not be
 * read or written. Like the blocking form it is local (no collective, except in checking mode:
 * one agreement before any message), and every rank of the halo must make the same sequence of
 * non-blocking calls, as MPI requires for collectives. Several may be in flight together, also
 * on the same halo and beside its persistent requests and blocking calls. A completed exchange
 * is kept (a few per halo) and runs again for a later call with the same arrays and element
 * types (derived ones by layout, as the blocking forms key them); other calls build theirs (the
 * plan's datatypes), which the persistent form does once. Cart_halo_request_plan gives the plan
 * it runs. Errors: those of Cart_halo_exchange, and MPI_ERR_REQUEST for a NULL request.
 *   Cart_Request r;
 *   Cart_halo_iexchange(u, halo, &r);
 *   compute_interior(u);     // cells that no ghost cell feeds; the array's memory is in use
 *   Cart_wait(&r);           // r is CART_REQUEST_NULL again */
int Cart_halo_iexchange(void* array, Cart_Halo halo, Cart_Request* request);
/* Several arrays at once, in one set of messages: arrays[0..count-1], each of the halo's layout
 * (interior, widths, order), with element types types[0..count-1], or the halo's element type
 * for every array when types is NULL. The plan is priced for the arrays' element sizes added
 * up (what one cell takes in a message): the cost model chooses again for that size, once per
 * size, locally (no collective; its "elem_bytes" is that sum in Cart_halo_request_plan's JSON),
 * unless the sum is the halo's element size or the ranks' cost models differed at creation (then
 * the plan chosen at creation). The _init form agrees on the number of arrays, their element
 * sizes in order and their sum (MPI_ERR_TRUNCATE on every rank where they differ, naming what,
 * e.g. "the number of fields differs between ranks (min 2, max 3)"); by default the blocking form,
 * like MPI, does not check other ranks' types: a rank whose blocking call passes another number
 * of arrays or another sum of element sizes than its peers (an erroneous program) may run another
 * plan than theirs and hang, where with one plan a peer sending more than was received failed
 * with a truncation error. A halo in checking mode (cartplan_check=collective, see
 * Cart_halo_exchange) agrees on the same before every blocking call: MPI_ERR_TRUNCATE on every
 * rank instead (types of equal size but another signature are not caught). The
 * blocking forms keep their exchange for the next call with the same arrays and element types:
 * predefined ones by handle, derived ones by layout (read with MPI_Type_get_envelope/get_contents, so a freed handle reused for another layout builds again;
 * a derived type is reused once a call with it succeeded, docs/mpi-semantics.md).
 *   void* fields[4] = {u, v, w, flags};
 *   MPI_Datatype types[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_INT};
 *   Cart_halo_exchange_fields(4, fields, types, halo); */
int Cart_halo_exchange_fields(int count, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo);
int Cart_halo_exchange_fields_init(int count, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo, MPI_Info info,
                                   Cart_Request* request);
/* The non-blocking form of Cart_halo_exchange_fields (as Cart_halo_iexchange for one array). */
int Cart_halo_iexchange_fields(int count, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo,
                               Cart_Request* request);
int Cart_halo_free(Cart_Halo* halo);
int Cart_halo_plan(Cart_Halo halo, char** json);
/* The plan a halo request runs (schema cartplan.halo_plan/1; release with Cart_free_plan_json):
 * the halo's (priced for the fields' element sizes added up), or for a persistent request in
 * measuring mode the candidate measured fastest at init. Local. MPI_ERR_REQUEST for
 * CART_REQUEST_NULL or a request that is not a halo exchange (persistent or non-blocking).
 *   char* json; Cart_halo_request_plan(req, &json); ... Cart_free_plan_json(json); */
int Cart_halo_request_plan(Cart_Request request, char** json);

#ifdef __cplusplus
}
#endif

#endif /* CARTPLAN_MPI_H_ */
