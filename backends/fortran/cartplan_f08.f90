! cartplan_f08: Fortran 2008 bindings of cartplan's C API (cartplan_mpi.h) on the mpi_f08 module.
!
! Bound: Cart_neighborhood_create and the helpers, Cart_type_create_triangle, the alltoall[v|w]
! and allgather[v|w] collectives in blocking, non-blocking (Cart_i...) and persistent (..._init)
! forms, each also as a large-count ..._c form, and the requests: Cart_start, Cart_wait,
! Cart_test, Cart_startall, Cart_waitall, Cart_testall, Cart_request_free,
! Cart_request_algorithm, Cart_request_plan and Cart_request_program; the halo API
! (Cart_halo_create, Cart_halo_exchange, Cart_halo_iexchange, Cart_halo_exchange_init,
! Cart_halo_exchange_fields, Cart_halo_iexchange_fields, Cart_halo_exchange_fields_init,
! Cart_halo_free, Cart_halo_plan, Cart_halo_request_plan; halos
! are type(Cart_Halo)); the graph collectives on distributed-graph communicators
! (Cart_graph_comm_create_adjacent, Cart_graph_neighbor_allgather[v] and
! Cart_graph_neighbor_alltoall[v|w] in blocking, non-blocking (Cart_graph_ineighbor_...) and
! persistent (..._init) forms, each also as a large-count ..._c form (Cart_graph_neighbor_..._c,
! Cart_graph_ineighbor_..._c, ..._init_c), Cart_graph_request_algorithm with the CART_GRAPH_*
! constants, Cart_graph_request_grid_dims). Not bound: the neighbourhood reductions and rooted
! collectives (Cart_allreduce, Cart_bcast, ...).
!
! Every procedure is a subroutine named like its C function, with MPI handles as
! type(MPI_Comm), type(MPI_Datatype) and type(MPI_Info), and a final, required
! `integer, intent(out) :: ierror` (an MPI error class; MPI_SUCCESS on success, describe it with
! cart_error_message()). Differences from C: the weights arguments are left out (cartplan ignores
! them), reorder is a logical, Cart_test and Cart_testall return a logical flag, requests are
! type(Cart_Request) (arrays of them for the ...all forms), Cart_request_plan,
! Cart_request_program, Cart_halo_plan and Cart_halo_request_plan return a
! `character(len=:), allocatable` copy of the JSON (released in C with Cart_free_plan_json;
! "" on error), and the ..._c forms take integer(MPI_COUNT_KIND)
! counts and integer(MPI_ADDRESS_KIND) displacements (separate names, not generic overloads).
! Buffers are choice arguments declared as Open MPI's mpi_f08 declares them: type(*),
! dimension(*) (assumed size: a non-contiguous section is passed as a contiguous copy) with
! gfortran's `!GCC$ ATTRIBUTES NO_ARG_CHECK`, so that any type, kind and rank is accepted, scalars
! too (another compiler ignores the directive and accepts arrays only). Those of non-blocking and
! persistent calls must stay in place until completed, and are declared asynchronous.
! mpi_f08's MPI_BOTTOM and MPI_IN_PLACE, passed as any buffer or halo array (the _fields forms'
! addresses too), reach C as C's MPI_BOTTOM and MPI_IN_PLACE: the shims compare addresses with
! Open MPI's sentinels (backends/mpi/fortran_sentinels.cc; with another MPI they would arrive as
! ordinary buffers). MPI_BOTTOM takes absolute addresses (MPI_Get_address) as a v or w form's
! displacements or in the datatypes, as in C; MPI_IN_PLACE is MPI_ERR_ARG in every collective
! bound here (neighbourhood collectives have no in-place form); both are MPI_ERR_BUFFER as a halo
! array.
! The halo API's _fields forms take the arrays' addresses instead (type(c_ptr), c_loc of arrays
! declared target, and asynchronous for the persistent form), since one argument cannot hold
! arrays of different types.
! Binding: bind(c) interfaces to small C shims in libcartplan (cartplan_f_*, which convert the
! Fortran handles with MPI_*_f2c and the buffer sentinels) and directly to the C functions that
! take neither an MPI handle nor a buffer.
module cartplan_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_long_long, c_intptr_t, c_ptr, c_null_ptr, c_char, c_f_pointer, &
                                         c_associated, c_size_t
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Info, MPI_ADDRESS_KIND, MPI_COUNT_KIND
  implicit none
  private

  ! A persistent or non-blocking collective (C: Cart_Request).
  type, bind(c), public :: Cart_Request
    type(c_ptr) :: handle = c_null_ptr
  end type Cart_Request

  integer, parameter, public :: CART_CHEBYSHEV = 1, CART_MANHATTAN = 2
  integer, parameter, public :: CART_TRIANGLE_LOWER = 1, CART_TRIANGLE_UPPER = 2, &
                                CART_TRIANGLE_LOWER_ANTI = 3, CART_TRIANGLE_UPPER_ANTI = 4
  ! What Cart_graph_request_algorithm returns (C: the CART_GRAPH_* macros).
  integer, parameter, public :: CART_GRAPH_LINEAR = 0, CART_GRAPH_PAIRING = 1, CART_GRAPH_CUMULATIVE = 2, &
                                CART_GRAPH_GRID = 3

  public :: cart_error_message, cart_request_is_null
  public :: Cart_neighborhood_create, Cart_relative_rank, Cart_relative_shift, Cart_relative_coord, &
            Cart_allranks_relative, Cart_neighbor_count, Cart_neighbor_degrees, Cart_neighbor_get, &
            Cart_graph_get, Cart_neighbors_count, Cart_neighbors, Cart_type_create_triangle
  public :: Cart_alltoall, Cart_alltoallv, Cart_alltoallw, Cart_allgather, Cart_allgatherv, Cart_allgatherw
  public :: Cart_ialltoall, Cart_ialltoallv, Cart_ialltoallw, Cart_iallgather, Cart_iallgatherv, Cart_iallgatherw
  public :: Cart_alltoall_init, Cart_alltoallv_init, Cart_alltoallw_init, &
            Cart_allgather_init, Cart_allgatherv_init, Cart_allgatherw_init
  public :: Cart_alltoall_c, Cart_alltoallv_c, Cart_alltoallw_c, Cart_allgather_c, Cart_allgatherv_c, Cart_allgatherw_c
  public :: Cart_ialltoall_c, Cart_ialltoallv_c, Cart_ialltoallw_c, Cart_iallgather_c, Cart_iallgatherv_c, Cart_iallgatherw_c
  public :: Cart_alltoall_init_c, Cart_alltoallv_init_c, Cart_alltoallw_init_c, &
            Cart_allgather_init_c, Cart_allgatherv_init_c, Cart_allgatherw_init_c
  public :: Cart_start, Cart_wait, Cart_test, Cart_request_free, Cart_request_algorithm
  public :: Cart_startall, Cart_waitall, Cart_testall, Cart_request_plan, Cart_request_program
  public :: Cart_halo_create, Cart_halo_exchange, Cart_halo_exchange_init, Cart_halo_free, Cart_halo_plan, &
            Cart_halo_request_plan, Cart_halo_exchange_fields, Cart_halo_exchange_fields_init, &
            Cart_halo_iexchange, Cart_halo_iexchange_fields
  public :: Cart_graph_comm_create_adjacent, Cart_graph_request_algorithm, Cart_graph_request_grid_dims
  public :: Cart_graph_neighbor_allgather, Cart_graph_neighbor_alltoall, Cart_graph_neighbor_allgatherv, &
            Cart_graph_neighbor_alltoallv, Cart_graph_neighbor_alltoallw
  public :: Cart_graph_ineighbor_allgather, Cart_graph_ineighbor_alltoall, Cart_graph_ineighbor_allgatherv, &
            Cart_graph_ineighbor_alltoallv, Cart_graph_ineighbor_alltoallw
  public :: Cart_graph_neighbor_allgather_init, Cart_graph_neighbor_alltoall_init, Cart_graph_neighbor_allgatherv_init, &
            Cart_graph_neighbor_alltoallv_init, Cart_graph_neighbor_alltoallw_init
  public :: Cart_graph_neighbor_allgather_c, Cart_graph_neighbor_alltoall_c, Cart_graph_neighbor_allgatherv_c, &
            Cart_graph_neighbor_alltoallv_c, Cart_graph_neighbor_alltoallw_c
  public :: Cart_graph_ineighbor_allgather_c, Cart_graph_ineighbor_alltoall_c, Cart_graph_ineighbor_allgatherv_c, &
            Cart_graph_ineighbor_alltoallv_c, Cart_graph_ineighbor_alltoallw_c
  public :: Cart_graph_neighbor_allgather_init_c, Cart_graph_neighbor_alltoall_init_c, &
            Cart_graph_neighbor_allgatherv_init_c, Cart_graph_neighbor_alltoallv_init_c, &
            Cart_graph_neighbor_alltoallw_init_c

  ! A halo exchange described by an array (C: Cart_Halo).
  type, bind(c), public :: Cart_Halo
    type(c_ptr) :: handle = c_null_ptr
  end type Cart_Halo

  interface
    ! --- C functions without MPI handles ---
    function c_error_message() bind(c, name="Cart_error_message")
      import :: c_ptr
      type(c_ptr) :: c_error_message
    end function
    function c_strlen(s) bind(c, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
    integer(c_int) function c_neighbors_count(d, metric, shadow, depth, t) bind(c, name="Cart_neighbors_count")
      import :: c_int
      integer(c_int), value :: d, metric, shadow, depth
      integer(c_int), intent(out) :: t
    end function
    integer(c_int) function c_neighbors(d, metric, shadow, depth, maxt, relative) bind(c, name="Cart_neighbors")
      import :: c_int
      integer(c_int), value :: d, metric, shadow, depth, maxt
      integer(c_int), intent(out) :: relative(*)
    end function
    integer(c_int) function c_start(r) bind(c, name="Cart_start")
      import :: c_int, Cart_Request
      type(Cart_Request), intent(inout) :: r
    end function
    integer(c_int) function c_wait(r) bind(c, name="Cart_wait")
      import :: c_int, Cart_Request
      type(Cart_Request), intent(inout) :: r
    end function
    integer(c_int) function c_test(r, flag) bind(c, name="Cart_test")
      import :: c_int, Cart_Request
      type(Cart_Request), intent(inout) :: r
      integer(c_int), intent(out) :: flag
    end function
    integer(c_int) function c_request_free(r) bind(c, name="Cart_request_free")
      import :: c_int, Cart_Request
      type(Cart_Request), intent(inout) :: r
    end function
    integer(c_int) function c_request_algorithm(r, combining) bind(c, name="Cart_request_algorithm")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      integer(c_int), intent(out) :: combining
    end function
    ! Arrays of requests: type(Cart_Request) is interoperable with Cart_Request (one pointer),
    ! so requests(*) is the C array.
    integer(c_int) function c_startall(count, r) bind(c, name="Cart_startall")
      import :: c_int, Cart_Request
      integer(c_int), value :: count
      type(Cart_Request), intent(inout) :: r(*)
    end function
    integer(c_int) function c_waitall(count, r) bind(c, name="Cart_waitall")
      import :: c_int, Cart_Request
      integer(c_int), value :: count
      type(Cart_Request), intent(inout) :: r(*)
    end function
    integer(c_int) function c_testall(count, r, flag) bind(c, name="Cart_testall")
      import :: c_int, Cart_Request
      integer(c_int), value :: count
      type(Cart_Request), intent(inout) :: r(*)
      integer(c_int), intent(out) :: flag
    end function
    integer(c_int) function c_request_plan(r, json) bind(c, name="Cart_request_plan")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      type(c_ptr), intent(out) :: json
    end function
    integer(c_int) function c_request_program(r, json) bind(c, name="Cart_request_program")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      type(c_ptr), intent(out) :: json
    end function
    subroutine c_free_plan_json(json) bind(c, name="Cart_free_plan_json")
      import :: c_ptr
      type(c_ptr), value :: json
    end subroutine

    ! --- shims with Fortran handles (backends/mpi/fortran_shim.cc) ---
    integer(c_int) function f_create(comm, d, dims, periods, t, rel, info, reorder, cart) &
        bind(c, name="cartplan_f_neighborhood_create")
      import :: c_int
      integer(c_int), value :: comm, d, t, info, reorder
      integer(c_int), intent(in) :: dims(*), periods(*), rel(*)
      integer(c_int), intent(out) :: cart
    end function
    integer(c_int) function f_relative_rank(comm, rel, rank) bind(c, name="cartplan_f_relative_rank")
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int), intent(in) :: rel(*)
      integer(c_int), intent(out) :: rank
    end function
    integer(c_int) function f_relative_shift(comm, rel, inrank, outrank) bind(c, name="cartplan_f_relative_shift")
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int), intent(in) :: rel(*)
      integer(c_int), intent(out) :: inrank, outrank
    end function
    integer(c_int) function f_relative_coord(comm, rank, rel) bind(c, name="cartplan_f_relative_coord")
      import :: c_int
      integer(c_int), value :: comm, rank
      integer(c_int), intent(out) :: rel(*)
    end function
    integer(c_int) function f_allranks_relative(comm, n, rel, ranks) bind(c, name="cartplan_f_allranks_relative")
      import :: c_int
      integer(c_int), value :: comm, n
      integer(c_int), intent(in) :: rel(*)
      integer(c_int), intent(out) :: ranks(*)
    end function
    integer(c_int) function f_neighbor_count(comm, t) bind(c, name="cartplan_f_neighbor_count")
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int), intent(out) :: t
    end function
    integer(c_int) function f_neighbor_degrees(comm, t, indeg, outdeg) bind(c, name="cartplan_f_neighbor_degrees")
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int), intent(out) :: t, indeg, outdeg
    end function
    integer(c_int) function f_neighbor_get(comm, maxin, sources, maxout, targets) bind(c, name="cartplan_f_neighbor_get")
      import :: c_int
      integer(c_int), value :: comm, maxin, maxout
      integer(c_int), intent(out) :: sources(*), targets(*)
    end function
    integer(c_int) function f_graph_get(comm, maxin, sources, maxout, targets) bind(c, name="cartplan_f_graph_get")
      import :: c_int
      integer(c_int), value :: comm, maxin, maxout
      integer(c_int), intent(out) :: sources(*), targets(*)
    end function
    integer(c_int) function f_type_create_triangle(order, ld, kind, oldtype, newtype) &
        bind(c, name="cartplan_f_type_create_triangle")
      import :: c_int
      integer(c_int), value :: order, ld, kind, oldtype
      integer(c_int), intent(out) :: newtype
    end function

    integer(c_int) function f_alltoall(sb, sc, st, rb, rc, rt, comm) bind(c, name="cartplan_f_alltoall")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
    end function
    integer(c_int) function f_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_alltoallv")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: sc(*), sd(*), rc(*), rd(*)
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_alltoallw")
      import :: c_int, c_intptr_t, MPI_Datatype
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
    end function
    integer(c_int) function f_allgather(sb, sc, st, rb, rc, rt, comm) bind(c, name="cartplan_f_allgather")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
    end function
    integer(c_int) function f_allgatherv(sb, sc, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_allgatherv")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: rc(*), rd(*)
      integer(c_int), value :: sc, st, rt, comm
    end function
    integer(c_int) function f_allgatherw(sb, sc, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_allgatherw")
      import :: c_int, c_intptr_t, MPI_Datatype
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      type(MPI_Datatype), intent(in) :: rt(*)
      integer(c_int), value :: sc, st, comm
    end function

    integer(c_int) function f_ialltoall(sb, sc, st, rb, rc, rt, comm, r) bind(c, name="cartplan_f_ialltoall")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_ialltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_ialltoallv")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), sd(*), rc(*), rd(*)
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_ialltoallw")
      import :: c_int, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_iallgather(sb, sc, st, rb, rc, rt, comm, r) bind(c, name="cartplan_f_iallgather")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_iallgatherv(sb, sc, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_iallgatherv")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: rc(*), rd(*)
      integer(c_int), value :: sc, st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_iallgatherw(sb, sc, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_iallgatherw")
      import :: c_int, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      type(MPI_Datatype), intent(in) :: rt(*)
      integer(c_int), value :: sc, st, comm
      type(Cart_Request), intent(out) :: r
    end function

    integer(c_int) function f_alltoall_init(sb, sc, st, rb, rc, rt, comm, info, r) bind(c, name="cartplan_f_alltoall_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_alltoallv_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), sd(*), rc(*), rd(*)
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_alltoallw_init")
      import :: c_int, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_allgather_init(sb, sc, st, rb, rc, rt, comm, info, r) bind(c, name="cartplan_f_allgather_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_allgatherv_init(sb, sc, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_allgatherv_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: rc(*), rd(*)
      integer(c_int), value :: sc, st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_allgatherw_init(sb, sc, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_allgatherw_init")
      import :: c_int, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      type(MPI_Datatype), intent(in) :: rt(*)
      integer(c_int), value :: sc, st, comm, info
      type(Cart_Request), intent(out) :: r
    end function

    ! --- large-count shims (MPI_Count counts: long long in Open MPI, MPI_Aint displacements) ---
    integer(c_int) function f_alltoall_c(sb, sc, st, rb, rc, rt, comm) bind(c, name="cartplan_f_alltoall_c")
      import :: c_int, c_long_long, c_intptr_t
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_alltoallv_c(sb, sc, sd, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_alltoallv_c")
      import :: c_int, c_long_long, c_intptr_t
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_alltoallw_c(sb, sc, sd, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_alltoallw_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
    end function
    integer(c_int) function f_allgather_c(sb, sc, st, rb, rc, rt, comm) bind(c, name="cartplan_f_allgather_c")
      import :: c_int, c_long_long, c_intptr_t
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_allgatherv_c(sb, sc, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_allgatherv_c")
      import :: c_int, c_long_long, c_intptr_t
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_allgatherw_c(sb, sc, st, rb, rc, rd, rt, comm) bind(c, name="cartplan_f_allgatherw_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      type(MPI_Datatype), intent(in) :: rt(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, comm
    end function

    integer(c_int) function f_ialltoall_c(sb, sc, st, rb, rc, rt, comm, r) bind(c, name="cartplan_f_ialltoall_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_ialltoallv_c(sb, sc, sd, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_ialltoallv_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_ialltoallw_c(sb, sc, sd, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_ialltoallw_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_iallgather_c(sb, sc, st, rb, rc, rt, comm, r) bind(c, name="cartplan_f_iallgather_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_iallgatherv_c(sb, sc, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_iallgatherv_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_iallgatherw_c(sb, sc, st, rb, rc, rd, rt, comm, r) bind(c, name="cartplan_f_iallgatherw_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      type(MPI_Datatype), intent(in) :: rt(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, comm
      type(Cart_Request), intent(out) :: r
    end function

    integer(c_int) function f_alltoall_init_c(sb, sc, st, rb, rc, rt, comm, info, r) bind(c, name="cartplan_f_alltoall_init_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_alltoallv_init_c(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_alltoallv_init_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_alltoallw_init_c(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_alltoallw_init_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_allgather_init_c(sb, sc, st, rb, rc, rt, comm, info, r) &
        bind(c, name="cartplan_f_allgather_init_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_allgatherv_init_c(sb, sc, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_allgatherv_init_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_allgatherw_init_c(sb, sc, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_allgatherw_init_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      type(MPI_Datatype), intent(in) :: rt(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, comm, info
      type(Cart_Request), intent(out) :: r
    end function

    ! --- the halo API ---
    integer(c_int) function f_halo_create(comm, d, interior, ghost_lo, ghost_hi, elemtype, order, info, halo) &
        bind(c, name="cartplan_f_halo_create")
      import :: c_int, Cart_Halo
      integer(c_int), value :: comm, d, elemtype, order, info
      integer(c_int), intent(in) :: interior(*), ghost_lo(*), ghost_hi(*)
      type(Cart_Halo), intent(out) :: halo
    end function
    integer(c_int) function f_halo_exchange(array, halo) bind(c, name="cartplan_f_halo_exchange")
      import :: c_int, c_ptr
      type(*), dimension(*) :: array
      type(c_ptr), value :: halo
    end function
    integer(c_int) function f_halo_exchange_init(array, halo, info, r) bind(c, name="cartplan_f_halo_exchange_init")
      import :: c_int, c_ptr, Cart_Request
      type(*), dimension(*), asynchronous :: array
      type(c_ptr), value :: halo
      integer(c_int), value :: info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_halo_exchange_fields(count, n_arrays, n_types, arrays, types, halo) &
        bind(c, name="cartplan_f_halo_exchange_fields2")
      import :: c_int, c_ptr, MPI_Datatype
      integer(c_int), value :: count, n_arrays, n_types
      type(c_ptr), intent(in) :: arrays(*)
      type(MPI_Datatype), intent(in) :: types(*)
      type(c_ptr), value :: halo
    end function
    integer(c_int) function f_halo_iexchange(array, halo, r) bind(c, name="cartplan_f_halo_iexchange")
      import :: c_int, c_ptr, Cart_Request
      type(*), dimension(*), asynchronous :: array
      type(c_ptr), value :: halo
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_halo_iexchange_fields(count, n_arrays, n_types, arrays, types, halo, r) &
        bind(c, name="cartplan_f_halo_iexchange_fields")
      import :: c_int, c_ptr, MPI_Datatype, Cart_Request
      integer(c_int), value :: count, n_arrays, n_types
      type(c_ptr), intent(in) :: arrays(*)
      type(MPI_Datatype), intent(in) :: types(*)
      type(c_ptr), value :: halo
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_halo_exchange_fields_init(count, n_arrays, n_types, arrays, types, halo, info, r) &
        bind(c, name="cartplan_f_halo_exchange_fields_init2")
      import :: c_int, c_ptr, MPI_Datatype, Cart_Request
      integer(c_int), value :: count, n_arrays, n_types
      type(c_ptr), intent(in) :: arrays(*)
      type(MPI_Datatype), intent(in) :: types(*)
      type(c_ptr), value :: halo
      integer(c_int), value :: info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function c_halo_free(halo) bind(c, name="Cart_halo_free")
      import :: c_int, Cart_Halo
      type(Cart_Halo), intent(inout) :: halo
    end function
    integer(c_int) function c_halo_plan(halo, json) bind(c, name="Cart_halo_plan")
      import :: c_int, c_ptr
      type(c_ptr), value :: halo
      type(c_ptr), intent(out) :: json
    end function
    integer(c_int) function c_halo_request_plan(r, json) bind(c, name="Cart_halo_request_plan")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      type(c_ptr), intent(out) :: json
    end function

    ! --- graph collectives (Cart_graph_*) ---
    integer(c_int) function f_graph_comm_create_adjacent(comm, indegree, sources, outdegree, destinations, info, graphcomm) &
        bind(c, name="cartplan_f_graph_comm_create_adjacent")
      import :: c_int
      integer(c_int), value :: comm, indegree, outdegree, info
      integer(c_int), intent(in) :: sources(*), destinations(*)
      integer(c_int), intent(out) :: graphcomm
    end function
    integer(c_int) function c_graph_request_algorithm(r, algorithm) bind(c, name="Cart_graph_request_algorithm")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      integer(c_int), intent(out) :: algorithm
    end function
    integer(c_int) function c_graph_request_grid_dims(r, ndims) bind(c, name="Cart_graph_request_grid_dims")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      integer(c_int), intent(out) :: ndims
    end function
    integer(c_int) function f_graph_neighbor_allgather(sb, sc, st, rb, rc, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_allgather")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_alltoall(sb, sc, st, rb, rc, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_alltoall")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_allgatherv(sb, sc, st, rb, rc, rd, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_allgatherv")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: rc(*), rd(*)
      integer(c_int), value :: sc, st, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallv")
      import :: c_int
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: sc(*), sd(*), rc(*), rd(*)
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallw")
      import :: c_int, c_intptr_t, MPI_Datatype
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_int), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
    end function
    integer(c_int) function f_graph_ineighbor_allgather(sb, sc, st, rb, rc, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_allgather")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_alltoall(sb, sc, st, rb, rc, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_alltoall")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_allgatherv(sb, sc, st, rb, rc, rd, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_allgatherv")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: rc(*), rd(*)
      integer(c_int), value :: sc, st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_alltoallv")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), sd(*), rc(*), rd(*)
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_alltoallw")
      import :: c_int, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_allgather_init(sb, sc, st, rb, rc, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_allgather_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_alltoall_init(sb, sc, st, rb, rc, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_alltoall_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), value :: sc, st, rc, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_allgatherv_init(sb, sc, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_allgatherv_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: rc(*), rd(*)
      integer(c_int), value :: sc, st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallv_init")
      import :: c_int, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), sd(*), rc(*), rd(*)
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallw_init")
      import :: c_int, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_int), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm, info
      type(Cart_Request), intent(out) :: r
    end function
    ! large-count graph shims (MPI_Count counts, MPI_Aint displacements)
    integer(c_int) function f_graph_neighbor_allgather_c(sb, sc, st, rb, rc, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_allgather_c")
      import :: c_int, c_long_long
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_alltoall_c(sb, sc, st, rb, rc, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_alltoall_c")
      import :: c_int, c_long_long
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_allgatherv_c(sb, sc, st, rb, rc, rd, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_allgatherv_c")
      import :: c_int, c_long_long, c_intptr_t
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_alltoallv_c(sb, sc, sd, st, rb, rc, rd, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallv_c")
      import :: c_int, c_long_long, c_intptr_t
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      integer(c_int), value :: st, rt, comm
    end function
    integer(c_int) function f_graph_neighbor_alltoallw_c(sb, sc, sd, st, rb, rc, rd, rt, comm) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallw_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype
      type(*), dimension(*), intent(in) :: sb
      type(*), dimension(*) :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
    end function
    integer(c_int) function f_graph_ineighbor_allgather_c(sb, sc, st, rb, rc, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_allgather_c")
      import :: c_int, c_long_long, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_alltoall_c(sb, sc, st, rb, rc, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_alltoall_c")
      import :: c_int, c_long_long, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_allgatherv_c(sb, sc, st, rb, rc, rd, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_allgatherv_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_alltoallv_c(sb, sc, sd, st, rb, rc, rd, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_alltoallv_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      integer(c_int), value :: st, rt, comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_ineighbor_alltoallw_c(sb, sc, sd, st, rb, rc, rd, rt, comm, r) &
        bind(c, name="cartplan_f_graph_ineighbor_alltoallw_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_allgather_init_c(sb, sc, st, rb, rc, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_allgather_init_c")
      import :: c_int, c_long_long, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_alltoall_init_c(sb, sc, st, rb, rc, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_alltoall_init_c")
      import :: c_int, c_long_long, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), value :: sc, rc
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_allgatherv_init_c(sb, sc, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_allgatherv_init_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: rc(*)
      integer(c_intptr_t), intent(in) :: rd(*)
      integer(c_long_long), value :: sc
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_alltoallv_init_c(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallv_init_c")
      import :: c_int, c_long_long, c_intptr_t, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      integer(c_int), value :: st, rt, comm, info
      type(Cart_Request), intent(out) :: r
    end function
    integer(c_int) function f_graph_neighbor_alltoallw_init_c(sb, sc, sd, st, rb, rc, rd, rt, comm, info, r) &
        bind(c, name="cartplan_f_graph_neighbor_alltoallw_init_c")
      import :: c_int, c_long_long, c_intptr_t, MPI_Datatype, Cart_Request
      type(*), dimension(*), intent(in), asynchronous :: sb
      type(*), dimension(*), asynchronous :: rb
      integer(c_long_long), intent(in) :: sc(*), rc(*)
      integer(c_intptr_t), intent(in) :: sd(*), rd(*)
      type(MPI_Datatype), intent(in) :: st(*), rt(*)
      integer(c_int), value :: comm, info
      type(Cart_Request), intent(out) :: r
    end function
  end interface

contains

  ! The message of the last error on this thread ("" after a success).
  function cart_error_message() result(msg)
    character(len=:), allocatable :: msg
    msg = string_of(c_error_message())
  end function

  ! A copy of the NUL-terminated C string p ("" for NULL).
  function string_of(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  logical function cart_request_is_null(request)
    type(Cart_Request), intent(in) :: request
    cart_request_is_null = .not. c_associated(request%handle)
  end function

  ! --- communicator and helpers ---
  subroutine Cart_neighborhood_create(comm, d, dims, periods, t, targetrelative, info, reorder, cartcomm, ierror)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: d, dims(*), periods(*), t, targetrelative(*)
    type(MPI_Info), intent(in) :: info
    logical, intent(in) :: reorder
    type(MPI_Comm), intent(out) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_create(comm%MPI_VAL, d, dims, periods, t, targetrelative, info%MPI_VAL, merge(1, 0, reorder), cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_relative_rank(cartcomm, relative, rank, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: relative(*)
    integer, intent(out) :: rank, ierror
    ierror = f_relative_rank(cartcomm%MPI_VAL, relative, rank)
  end subroutine

  subroutine Cart_relative_shift(cartcomm, relative, inrank, outrank, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: relative(*)
    integer, intent(out) :: inrank, outrank, ierror
    ierror = f_relative_shift(cartcomm%MPI_VAL, relative, inrank, outrank)
  end subroutine

  subroutine Cart_relative_coord(cartcomm, rank, relative, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: rank
    integer, intent(out) :: relative(*), ierror
    ierror = f_relative_coord(cartcomm%MPI_VAL, rank, relative)
  end subroutine

  subroutine Cart_allranks_relative(cartcomm, n, relative, ranks, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: n, relative(*)
    integer, intent(out) :: ranks(*), ierror
    ierror = f_allranks_relative(cartcomm%MPI_VAL, n, relative, ranks)
  end subroutine

  subroutine Cart_neighbor_count(cartcomm, t, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: t, ierror
    ierror = f_neighbor_count(cartcomm%MPI_VAL, t)
  end subroutine

  subroutine Cart_neighbor_degrees(cartcomm, t, indegree, outdegree, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: t, indegree, outdegree, ierror
    ierror = f_neighbor_degrees(cartcomm%MPI_VAL, t, indegree, outdegree)
  end subroutine

  subroutine Cart_neighbor_get(cartcomm, maxin, sources, maxout, targets, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: maxin, maxout
    integer, intent(out) :: sources(*), targets(*), ierror
    ierror = f_neighbor_get(cartcomm%MPI_VAL, maxin, sources, maxout, targets)
  end subroutine

  subroutine Cart_graph_get(cartcomm, maxin, sources, maxout, targets, ierror)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: maxin, maxout
    integer, intent(out) :: sources(*), targets(*), ierror
    ierror = f_graph_get(cartcomm%MPI_VAL, maxin, sources, maxout, targets)
  end subroutine

  subroutine Cart_neighbors_count(d, metric, shadow, depth, t, ierror)
    integer, intent(in) :: d, metric, shadow, depth
    integer, intent(out) :: t, ierror
    ierror = c_neighbors_count(d, metric, shadow, depth, t)
  end subroutine

  subroutine Cart_neighbors(d, metric, shadow, depth, maxt, relative, ierror)
    integer, intent(in) :: d, metric, shadow, depth, maxt
    integer, intent(out) :: relative(*), ierror
    ierror = c_neighbors(d, metric, shadow, depth, maxt, relative)
  end subroutine

  subroutine Cart_type_create_triangle(order, ld, kind, oldtype, newtype, ierror)
    integer, intent(in) :: order, ld, kind
    type(MPI_Datatype), intent(in) :: oldtype
    type(MPI_Datatype), intent(out) :: newtype
    integer, intent(out) :: ierror
    ierror = f_type_create_triangle(order, ld, kind, oldtype%MPI_VAL, newtype%MPI_VAL)
  end subroutine

  ! --- blocking collectives ---
  subroutine Cart_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_alltoall(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_alltoallv(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtype%MPI_VAL, &
                         cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_allgather(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*), displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_allgatherv(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_allgatherw(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_allgatherw(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL)
  end subroutine

  ! --- non-blocking collectives (complete with Cart_wait / Cart_test) ---
  subroutine Cart_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_ialltoall(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, cartcomm, &
                             request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_ialltoallv(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtype%MPI_VAL, &
                          cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, &
                             request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL, &
                          request)
  end subroutine

  subroutine Cart_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_iallgather(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*), displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_iallgatherv(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, &
                           cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_iallgatherw(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_iallgatherw(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL, &
                           request)
  end subroutine

  ! --- persistent collectives (Cart_start, Cart_wait / Cart_test, Cart_request_free) ---
  subroutine Cart_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_alltoall_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, &
                             info%MPI_VAL, request)
  end subroutine

  subroutine Cart_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, cartcomm, &
                                 info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtype%MPI_VAL, &
                              cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, &
                                 info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                              cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_allgather_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, &
                              info%MPI_VAL, request)
  end subroutine

  subroutine Cart_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, cartcomm, info, &
                                  request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*), displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_allgatherv_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, &
                               cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_allgatherw_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, info, &
                                  request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_allgatherw_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtypes, &
                               cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  ! --- large-count forms (MPI_COUNT_KIND counts, MPI_ADDRESS_KIND displacements) ---
  ! --- blocking collectives, large counts ---
  subroutine Cart_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_alltoall_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtype%MPI_VAL, &
                           cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, &
                              ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_allgather_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_allgatherv_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, &
                            cartcomm%MPI_VAL)
  end subroutine

  subroutine Cart_allgatherw_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(out) :: ierror
    ierror = f_allgatherw_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL)
  end subroutine

  ! --- non-blocking collectives, large counts ---
  subroutine Cart_ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_ialltoall_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, &
                           request)
  end subroutine

  subroutine Cart_ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, cartcomm, &
                               request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtype%MPI_VAL, &
                            cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, &
                               request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                            cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_iallgather_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, &
                            request)
  end subroutine

  subroutine Cart_iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, cartcomm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_iallgatherv_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, &
                             cartcomm%MPI_VAL, request)
  end subroutine

  subroutine Cart_iallgatherw_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, request, &
                                ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_iallgatherw_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtypes, cartcomm%MPI_VAL, &
                             request)
  end subroutine

  ! --- persistent collectives, large counts ---
  subroutine Cart_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_alltoall_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, &
                               info%MPI_VAL, request)
  end subroutine

  subroutine Cart_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, cartcomm, &
                                   info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, &
                                recvtype%MPI_VAL, cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, &
                                   info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                                cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, cartcomm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_allgather_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, cartcomm%MPI_VAL, &
                                info%MPI_VAL, request)
  end subroutine

  subroutine Cart_allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, cartcomm, info, &
                                    request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_allgatherv_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, &
                                 cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_allgatherw_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtypes, cartcomm, info, &
                                    request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtypes(*)
    type(MPI_Comm), intent(in) :: cartcomm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_allgatherw_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, recvtypes, &
                                 cartcomm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  ! --- requests ---
  subroutine Cart_start(request, ierror)
    type(Cart_Request), intent(inout) :: request
    integer, intent(out) :: ierror
    ierror = c_start(request)
  end subroutine

  subroutine Cart_wait(request, ierror)
    type(Cart_Request), intent(inout) :: request
    integer, intent(out) :: ierror
    ierror = c_wait(request)
  end subroutine

  subroutine Cart_test(request, flag, ierror)
    type(Cart_Request), intent(inout) :: request
    logical, intent(out) :: flag
    integer, intent(out) :: ierror
    integer(c_int) :: f
    f = 0
    ierror = c_test(request, f)
    flag = f /= 0
  end subroutine

  subroutine Cart_request_free(request, ierror)
    type(Cart_Request), intent(inout) :: request
    integer, intent(out) :: ierror
    ierror = c_request_free(request)
  end subroutine

  ! combining: .true. when the request runs the message-combining plan, .false. for direct.
  subroutine Cart_request_algorithm(request, combining, ierror)
    type(Cart_Request), intent(in) :: request
    logical, intent(out) :: combining
    integer, intent(out) :: ierror
    integer(c_int) :: c
    c = 0
    ierror = c_request_algorithm(request%handle, c)
    combining = c /= 0
  end subroutine

  ! Array forms (C: Cart_startall/Cart_waitall/Cart_testall): count requests of requests(*).
  subroutine Cart_startall(count, requests, ierror)
    integer, intent(in) :: count
    type(Cart_Request), intent(inout) :: requests(*)
    integer, intent(out) :: ierror
    ierror = c_startall(count, requests)
  end subroutine

  subroutine Cart_waitall(count, requests, ierror)
    integer, intent(in) :: count
    type(Cart_Request), intent(inout) :: requests(*)
    integer, intent(out) :: ierror
    ierror = c_waitall(count, requests)
  end subroutine

  ! flag: .true. when all requests were complete (and are now completed).
  subroutine Cart_testall(count, requests, flag, ierror)
    integer, intent(in) :: count
    type(Cart_Request), intent(inout) :: requests(*)
    logical, intent(out) :: flag
    integer, intent(out) :: ierror
    integer(c_int) :: f
    f = 0
    ierror = c_testall(count, requests, f)
    flag = f /= 0
  end subroutine

  ! The request's plan as JSON text (schema cartplan.plan/1 or /2; "" on error). The C string is
  ! copied and released with Cart_free_plan_json.
  subroutine Cart_request_plan(request, json, ierror)
    type(Cart_Request), intent(in) :: request
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierror
    type(c_ptr) :: p
    p = c_null_ptr
    ierror = c_request_plan(request%handle, p)
    json = string_of(p)
    call c_free_plan_json(p)
  end subroutine

  ! The program the request runs on this rank as JSON text (format cartplan.program/2; "" on error).
  subroutine Cart_request_program(request, json, ierror)
    type(Cart_Request), intent(in) :: request
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierror
    type(c_ptr) :: p
    p = c_null_ptr
    ierror = c_request_program(request%handle, p)
    json = string_of(p)
    call c_free_plan_json(p)
  end subroutine

  ! The halo API (cartplan_mpi.h, "Halo exchanges"): interior, ghost_lo and ghost_hi hold d
  ! entries; order is MPI_ORDER_FORTRAN (a Fortran array: dimension k of the array is dimension k
  ! of the grid) or MPI_ORDER_C. Collective, like Cart_halo_create.
  subroutine Cart_halo_create(cartcomm, d, interior, ghost_lo, ghost_hi, elemtype, order, info, halo, ierror)
    use mpi_f08, only: MPI_ORDER_C, MPI_ORDER_FORTRAN
    type(MPI_Comm), intent(in) :: cartcomm
    integer, intent(in) :: d, interior(*), ghost_lo(*), ghost_hi(*), order
    type(MPI_Datatype), intent(in) :: elemtype
    type(MPI_Info), intent(in) :: info
    type(Cart_Halo), intent(out) :: halo
    integer, intent(out) :: ierror
    integer :: o
    o = -1
    if (order == MPI_ORDER_C) o = 0
    if (order == MPI_ORDER_FORTRAN) o = 1
    ierror = f_halo_create(cartcomm%MPI_VAL, d, interior, ghost_lo, ghost_hi, elemtype%MPI_VAL, o, info%MPI_VAL, halo)
  end subroutine

  ! Fills the ghost cells of `array` (blocking, neighbours only).
  subroutine Cart_halo_exchange(array, halo, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: array
    type(*), dimension(*) :: array
    type(Cart_Halo), intent(in) :: halo
    integer, intent(out) :: ierror
    ierror = f_halo_exchange(array, halo%handle)
  end subroutine

  ! A persistent halo exchange of `array` (collective), driven by Cart_start and Cart_wait.
  subroutine Cart_halo_exchange_init(array, halo, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: array
    type(*), dimension(*), asynchronous :: array
    type(Cart_Halo), intent(in) :: halo
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_halo_exchange_init(array, halo%handle, info%MPI_VAL, request)
  end subroutine

  ! Non-blocking (C: Cart_halo_iexchange): the exchange started; Cart_wait (or a Cart_test that
  ! sets flag) completes the request and sets it to null. `array`, declared asynchronous, must
  ! not be read or written until then.
  !   call Cart_halo_iexchange(a, halo, req, ierror)
  !   ! ... compute what needs no ghost cell ...
  !   call Cart_wait(req, ierror)
  subroutine Cart_halo_iexchange(array, halo, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: array
    type(*), dimension(*), asynchronous :: array
    type(Cart_Halo), intent(in) :: halo
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_halo_iexchange(array, halo%handle, request)
  end subroutine

  ! Several arrays of the halo's layout in one set of messages (C: Cart_halo_exchange_fields):
  ! arrays(1:count) are their addresses, c_loc of arrays declared target; types(1:count) their
  ! element types (of any sizes; the plan is priced for the sizes added up). Blocking. A count
  ! larger than size(arrays) or size(types) is MPI_ERR_COUNT naming the count and both sizes,
  ! nothing past them read (reported as every error, through the halo's error handler; in
  ! checking mode agreed, so that every rank returns an error).
  !   real(real64), target :: u(0:n+1, 0:m+1)
  !   integer, target :: flags(0:n+1, 0:m+1)
  !   call Cart_halo_exchange_fields(2, [c_loc(u), c_loc(flags)], [MPI_REAL8, MPI_INTEGER], halo, ierror)
  subroutine Cart_halo_exchange_fields(count, arrays, types, halo, ierror)
    integer, intent(in) :: count
    type(c_ptr), intent(in) :: arrays(:)
    type(MPI_Datatype), intent(in) :: types(:)
    type(Cart_Halo), intent(in) :: halo
    integer, intent(out) :: ierror
    ierror = f_halo_exchange_fields(count, size(arrays), size(types), arrays, types, halo%handle)
  end subroutine

  ! The persistent form (collective; C: Cart_halo_exchange_fields_init): the arrays, declared
  ! target and asynchronous, must stay in place until the request is freed. A count larger than
  ! size(arrays) or size(types) still takes part in init's agreement: MPI_ERR_COUNT naming the
  ! count and both sizes on this rank, an error on every other.
  subroutine Cart_halo_exchange_fields_init(count, arrays, types, halo, info, request, ierror)
    integer, intent(in) :: count
    type(c_ptr), intent(in) :: arrays(:)
    type(MPI_Datatype), intent(in) :: types(:)
    type(Cart_Halo), intent(in) :: halo
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_halo_exchange_fields_init(count, size(arrays), size(types), arrays, types, halo%handle, info%MPI_VAL, request)
  end subroutine

  ! The non-blocking form (C: Cart_halo_iexchange_fields): the arrays, declared target and
  ! asynchronous, stay in use until Cart_wait or Cart_test completes the request. A count larger
  ! than size(arrays) or size(types) is MPI_ERR_COUNT naming the count and both sizes.
  subroutine Cart_halo_iexchange_fields(count, arrays, types, halo, request, ierror)
    integer, intent(in) :: count
    type(c_ptr), intent(in) :: arrays(:)
    type(MPI_Datatype), intent(in) :: types(:)
    type(Cart_Halo), intent(in) :: halo
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_halo_iexchange_fields(count, size(arrays), size(types), arrays, types, halo%handle, request)
  end subroutine

  subroutine Cart_halo_free(halo, ierror)
    type(Cart_Halo), intent(inout) :: halo
    integer, intent(out) :: ierror
    ierror = c_halo_free(halo)
  end subroutine

  ! The halo plan as JSON text (schema cartplan.halo_plan/1; "" on error).
  subroutine Cart_halo_plan(halo, json, ierror)
    type(Cart_Halo), intent(in) :: halo
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierror
    type(c_ptr) :: p
    p = c_null_ptr
    ierror = c_halo_plan(halo%handle, p)
    json = string_of(p)
    call c_free_plan_json(p)
  end subroutine

  ! The plan a persistent halo request runs as JSON text (schema cartplan.halo_plan/1; "" on
  ! error): the halo's, or in measuring mode the candidate measured fastest at init. Local;
  ! MPI_ERR_REQUEST for a null request or one that is not a halo exchange (persistent or non-blocking).
  !   call Cart_halo_exchange_init(a, halo, MPI_INFO_NULL, req, ierror)
  !   call Cart_halo_request_plan(req, json, ierror)   ! json holds "algorithm": "..."
  subroutine Cart_halo_request_plan(request, json, ierror)
    type(Cart_Request), intent(in) :: request
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierror
    type(c_ptr) :: p
    p = c_null_ptr
    ierror = c_halo_request_plan(request%handle, p)
    json = string_of(p)
    call c_free_plan_json(p)
  end subroutine

  ! --- graph collectives (cartplan_mpi.h, "Graph collectives"; docs/graphs-mpi.md) ---
  ! A communicator for the Cart_graph_* calls (collective over comm): with Open MPI
  ! MPI_Dist_graph_create_adjacent's (unweighted, not reordered), so MPI_Neighbor_* work on it too.
  ! sources(1:indegree) and destinations(1:outdegree) are ranks of comm, duplicates and self edges
  ! allowed. Every rank returns the same error class (the lists checked across ranks).
  !   call Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, [left, right], 2, [left, right], MPI_INFO_NULL, g, ierror)
  subroutine Cart_graph_comm_create_adjacent(comm, indegree, sources, outdegree, destinations, info, graphcomm, ierror)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: indegree, sources(*), outdegree, destinations(*)
    type(MPI_Info), intent(in) :: info
    type(MPI_Comm), intent(out) :: graphcomm
    integer, intent(out) :: ierror
    ierror = f_graph_comm_create_adjacent(comm%MPI_VAL, indegree, sources, outdegree, destinations, info%MPI_VAL, &
                                          graphcomm%MPI_VAL)
  end subroutine

  ! The graph collectives have MPI_Neighbor_allgather[v] / MPI_Neighbor_alltoall[v|w]'s arguments
  ! (the w form's displacements in bytes, integer(MPI_ADDRESS_KIND); its types one per edge:
  ! outdegree send types, indegree receive types) and deliver what those deliver. comm: a
  ! communicator of Cart_graph_comm_create_adjacent or MPI_Dist_graph_create[_adjacent].
  !   call Cart_graph_neighbor_allgather(mine, 4, MPI_REAL8, theirs, 4, MPI_REAL8, g, ierror)
  subroutine Cart_graph_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgather(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                        comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoall(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*), displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgatherv(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, recvtype%MPI_VAL, &
                                         comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, &
                                           comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, &
                                        recvtype%MPI_VAL, comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                                           comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer, intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                                        comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_allgather(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                         comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_alltoall(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                        comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &
                                             request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*), displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_allgatherv(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, &
                                          recvtype%MPI_VAL, comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, &
                                            comm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, &
                                         recvtype%MPI_VAL, comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                                            comm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, &
                                         comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, &
                                                request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgather_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                             comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, &
                                               request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoall_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                            comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &
                                                 info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcount, recvcounts(*), displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgatherv_init(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, &
                                              recvtype%MPI_VAL, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, &
                                                recvtype, comm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, &
                                             recvtype%MPI_VAL, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                                recvtypes, comm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer, intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                             recvtypes, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  ! Large-count forms of the graph collectives: integer(MPI_COUNT_KIND) counts and
  ! integer(MPI_ADDRESS_KIND) displacements (MPI_Neighbor_*_c's), otherwise the calls above.
  !   integer(MPI_COUNT_KIND) :: rc(2) = [3_MPI_COUNT_KIND * 2**30, 8_MPI_COUNT_KIND]
  !   integer(MPI_ADDRESS_KIND) :: rd(2) = [0_MPI_ADDRESS_KIND, 3_MPI_ADDRESS_KIND * 2**30]
  !   call Cart_graph_neighbor_allgatherv_c(mine, n, MPI_BYTE, theirs, rc, rd, MPI_BYTE, g, ierror)
  subroutine Cart_graph_neighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgather_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                          comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoall_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                         comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &
                                              ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgatherv_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, &
                                           recvtype%MPI_VAL, comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, &
                                             recvtype, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, &
                                          recvtype%MPI_VAL, comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                             recvtypes, comm, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in) :: sendbuf
    type(*), dimension(*) :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                          recvtypes, comm%MPI_VAL)
  end subroutine

  subroutine Cart_graph_ineighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, &
                                              ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_allgather_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                           comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, &
                                             ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_alltoall_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                          comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &
                                               request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_allgatherv_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, &
                                            recvtype%MPI_VAL, comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, &
                                              recvtype, comm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, rdispls, &
                                           recvtype%MPI_VAL, comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                              recvtypes, comm, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: comm
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                           recvtypes, comm%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, &
                                                  request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgather_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, &
                                               recvtype%MPI_VAL, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, &
                                                 request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcount
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoall_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcount, recvtype%MPI_VAL, &
                                              comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, &
                                                   comm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcount, recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: displs(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_allgatherv_init_c(sendbuf, sendcount, sendtype%MPI_VAL, recvbuf, recvcounts, displs, &
                                                recvtype%MPI_VAL, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, &
                                                  recvtype, comm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtype, recvtype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype%MPI_VAL, recvbuf, recvcounts, &
                                               rdispls, recvtype%MPI_VAL, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  subroutine Cart_graph_neighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                                  recvtypes, comm, info, request, ierror)
    !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
    type(*), dimension(*), intent(in), asynchronous :: sendbuf
    type(*), dimension(*), asynchronous :: recvbuf
    integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
    integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
    type(MPI_Datatype), intent(in) :: sendtypes(*), recvtypes(*)
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(Cart_Request), intent(out) :: request
    integer, intent(out) :: ierror
    ierror = f_graph_neighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, &
                                               recvtypes, comm%MPI_VAL, info%MPI_VAL, request)
  end subroutine

  ! The algorithm a graph request runs (local): CART_GRAPH_LINEAR, CART_GRAPH_PAIRING,
  ! CART_GRAPH_CUMULATIVE or CART_GRAPH_GRID; MPI_ERR_REQUEST for a Cartesian request.
  subroutine Cart_graph_request_algorithm(request, algorithm, ierror)
    type(Cart_Request), intent(in) :: request
    integer, intent(out) :: algorithm
    integer, intent(out) :: ierror
    integer(c_int) :: a
    a = -1
    ierror = c_graph_request_algorithm(request%handle, a)
    algorithm = a
  end subroutine

  ! The number of dimensions of the virtual grid a CART_GRAPH_GRID request routes through (local;
  ! 0 for the other algorithms); MPI_ERR_REQUEST for a Cartesian request.
  subroutine Cart_graph_request_grid_dims(request, ndims, ierror)
    type(Cart_Request), intent(in) :: request
    integer, intent(out) :: ndims
    integer, intent(out) :: ierror
    integer(c_int) :: n
    n = 0
    ierror = c_graph_request_grid_dims(request%handle, n)
    ndims = n
  end subroutine
end module cartplan_f08
