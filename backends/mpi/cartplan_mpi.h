/* cartplan's C API: Cartesian collective communication over isomorphic (stencil)
 * neighbourhoods, in the vocabulary of Träff & Hunold (ICPP 2019), Listings 1 and 2.
 *
 * Every function returns an MPI error class (MPI_SUCCESS on success); Cart_error_message()
 * describes the last error on the calling thread. cartplan never invokes MPI error handlers
 * for its own argument checks and never aborts. Collective calls check their arguments on
 * every rank and agree, so a bad argument on one rank makes every rank return an error
 * instead of hanging.
 *
 * Buffers follow MPI's neighbourhood collectives: blocks in neighbourhood (offset) order,
 * block i goes to the process at +offset[i] and block i arrives from the process at
 * -offset[i]. On non-periodic dimensions a neighbour outside the mesh is MPI_PROC_NULL: the
 * block is neither sent nor received and its recv buffer is never written. For the v and w
 * variants block i must have the same size (type signature) on every rank; a size mismatch
 * is detected and returned as MPI_ERR_TRUNCATE. Arguments of blocks whose neighbour is
 * outside the mesh are not significant.
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
 * of t offsets (targetrelative holds t*d ints). Info keys:
 * cartplan_algorithm (auto|direct|combining), cartplan_dim_order (auto|natural|K,K,..),
 * cartplan_alpha_us, cartplan_beta_us_per_byte, cartplan_cost_model (path of a calibrated model
 * file written by bench/calibrate; the alpha/beta keys override it). Every rank must pass the same d, dims,
 * periods, offsets and Info keys (checked). Ranks beyond prod(dims) get MPI_COMM_NULL.
 * MPI_Comm_free(cartcomm) releases everything. weights are accepted and ignored (no remapping). */
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
int Cart_neighbor_get(MPI_Comm cartcomm, int maxin, int sources[], int sourceweights[], int maxout, int targets[],
                      int targetweights[]);
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

/* The algorithm a request runs: 0 direct, 1 combining (for tests and tools). */
int Cart_request_algorithm(Cart_Request request, int* combining);

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
 * MPI_DATATYPE_NULL; else what MPI_Type_indexed returns. It does not set Cart_error_message().
 * Local (no communication).
 * --------------------------------------------------------------------------------------- */
#define CART_TRIANGLE_LOWER 1
#define CART_TRIANGLE_UPPER 2
#define CART_TRIANGLE_LOWER_ANTI 3
#define CART_TRIANGLE_UPPER_ANTI 4
int Cart_type_create_triangle(int order, int ld, int kind, MPI_Datatype oldtype, MPI_Datatype* newtype);

#ifdef __cplusplus
}
#endif

#endif /* CARTPLAN_MPI_H_ */
