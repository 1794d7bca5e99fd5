! graph_f08: the cartplan_f08 module's graph collectives, built against an installed prefix by
! tests/consumers/run.sh (4 ranks). An irregular graph with a duplicate edge (0 -> 1 twice) and a
! self edge (2 -> 2), its sources listed in an order of their own, made with
! Cart_graph_comm_create_adjacent once per algorithm (Info cartplan_algorithm = linear, grid,
! pairing and cumulative with cartplan_theta = 1; the cumulative one with cartplan_graph_comm =
! attribute, a duplicate carrying the lists, so that the shims read the degrees from there).
! Cart_graph_neighbor_allgather, _alltoall, _allgatherv and _alltoallv (rank-dependent counts,
! displacements with gaps, reversed send blocks) and _alltoallw (per-edge types: a strided vector
! and a contiguous pair, byte displacements) run blocking, non-blocking (twice each) and
! persistent (one init, started twice with changed data), each as the int call and as its
! large-count _c form (Cart_graph_neighbor_*_c, Cart_graph_ineighbor_*_c, *_init_c: the same
! counts and displacements as integer(MPI_COUNT_KIND) and integer(MPI_ADDRESS_KIND) copies), every
! element of the receive buffer compared with MPI_Neighbor_* (int forms) of mpi_f08 on an
! MPI_Dist_graph_create_adjacent communicator with the same lists. Requests are checked with Cart_graph_request_algorithm (and
! Cart_graph_request_grid_dims); three errors with their classes: a graph call on MPI_COMM_WORLD
! (MPI_ERR_TOPOLOGY), a rank outside the communicator at Cart_graph_comm_create_adjacent
! (MPI_ERR_RANK on every rank), Cart_graph_request_algorithm of a null request (MPI_ERR_ARG). Also
! a rank without any edge beside a ring of the others (blocking alltoallw and alltoallw_c).
! Prints "graph_f08: OK" on rank 0 and exits 0 when every check passes on every rank, else exit 1.
program graph_f08
  use mpi_f08
  use cartplan_f08
  implicit none
  integer, parameter :: nbuf = 64, na = 3, nt = 2, n_ops = 5, n_algos = 4
  character(len=10), parameter :: op_names(n_ops) = [character(len=10) :: 'allgather', 'alltoall', 'allgatherv', &
                                                     'alltoallv', 'alltoallw']
  character(len=10), parameter :: algos(n_algos) = [character(len=10) :: 'linear', 'grid', 'pairing', 'cumulative']
  ! How Cart_graph_comm_create_adjacent makes each communicator (Info cartplan_graph_comm).
  character(len=10), parameter :: graph_comms(n_algos) = [character(len=10) :: 'auto', 'auto', 'auto', 'attribute']
  character(len=14), parameter :: forms(0:2) = [character(len=14) :: 'blocking', 'non-blocking', 'persistent']
  integer :: expected_algo(n_algos)
  integer :: me, nranks, ierr, cls, topo, indeg, outdeg, failures, total, a, op, form, alg, ndims
  integer, allocatable :: src(:), dst(:)
  integer, asynchronous, target :: sbuf(nbuf), rbuf(nbuf)
  integer :: ref(nbuf)
  integer :: scounts(4), sdispls(4), rcounts(4), rdispls(4), gcounts(4), wsc(4), wrc(4)
  integer(MPI_ADDRESS_KIND) :: wsd(4), wrd(4)
  ! The same arguments for the _c forms.
  integer(MPI_COUNT_KIND) :: scounts_c(4), rcounts_c(4), gcounts_c(4), wsc_c(4), wrc_c(4), na_c, nt_c, me1_c
  integer(MPI_ADDRESS_KIND) :: sdispls_c(4), rdispls_c(4)
  logical :: large
  integer :: compared, compared_c  ! receive buffers compared on this rank (int forms, _c forms)
  type(MPI_Datatype) :: wst(4), wrt(4), vec
  type(MPI_Comm) :: dg, g, bad
  type(MPI_Info) :: info
  type(Cart_Request) :: req

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  if (nranks /= 4) then
    write (*, '(a, i0)') 'graph_f08: run me on 4 ranks, not ', nranks
    call MPI_Finalize()
    stop 2
  end if
  failures = 0
  compared = 0
  compared_c = 0
  expected_algo = [CART_GRAPH_LINEAR, CART_GRAPH_GRID, CART_GRAPH_PAIRING, CART_GRAPH_CUMULATIVE]
  call expect(CART_GRAPH_LINEAR == 0 .and. CART_GRAPH_PAIRING == 1 .and. CART_GRAPH_CUMULATIVE == 2 .and. &
              CART_GRAPH_GRID == 3, 'CART_GRAPH_* values differ from cartplan_mpi.h')

  ! The graph: destinations, and the sources in an order that is not the senders'.
  select case (me)
  case (0)
    dst = [1, 1, 2, 3]
    src = [3, 1]
  case (1)
    dst = [0, 2]
    src = [0, 0]
  case (2)
    dst = [3, 2]
    src = [2, 0, 1]
  case default
    dst = [0]
    src = [0, 2]
  end select
  indeg = size(src)
  outdeg = size(dst)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, src, MPI_UNWEIGHTED, outdeg, dst, MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., dg)
  call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  call set_arguments()

  do a = 1, n_algos
    call MPI_Info_create(info)
    call MPI_Info_set(info, 'cartplan_algorithm', trim(algos(a)))
    if (algos(a) == 'pairing' .or. algos(a) == 'cumulative') call MPI_Info_set(info, 'cartplan_theta', '1')
    call MPI_Info_set(info, 'cartplan_graph_comm', trim(graph_comms(a)))
    call Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, indeg, src, outdeg, dst, info, g, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_graph_comm_create_adjacent (' // trim(algos(a)) // '): ' // cart_error_message())
    call MPI_Topo_test(g, topo)
    call expect(topo == merge(MPI_UNDEFINED, MPI_DIST_GRAPH, graph_comms(a) == 'attribute'), &
                'Cart_graph_comm_create_adjacent (' // trim(algos(a)) // '): not the kind of communicator asked for')
    do op = 1, n_ops
      do form = 0, 2
        large = .false.
        call run_case()
        large = .true.
        call run_case()
      end do
    end do
    call MPI_Comm_free(g)
    call MPI_Info_free(info)
  end do

  call isolated_rank()

  ! Errors, returned: MPI_COMM_WORLD is no graph; rank 4 is outside a communicator of 4 (every
  ! rank fails); a null request.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
  call Cart_graph_neighbor_alltoallw(sbuf, wsc, wsd, wst, rbuf, wrc, wrd, wrt, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_TOPOLOGY, 'Cart_graph_neighbor_alltoallw on MPI_COMM_WORLD')
  if (me == 0) dst(1) = 4
  call Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, indeg, src, outdeg, dst, MPI_INFO_NULL, bad, ierr)
  call expect_class(ierr, MPI_ERR_RANK, 'Cart_graph_comm_create_adjacent with destination 4')
  call Cart_graph_request_algorithm(Cart_Request(), alg, ierr)
  call expect_class(ierr, MPI_ERR_ARG, 'Cart_graph_request_algorithm of a null request')

  call MPI_Type_free(vec)
  call MPI_Comm_free(dg)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    if (total == 0) then
      write (*, '(a, i0, a, i0, a)') 'graph_f08: OK (rank 0 compared ', compared, ' receive buffers of int calls, ', &
                                     compared_c, ' of _c calls)'
    else
      write (*, '(a, i0, a)') 'graph_f08: FAILED (', total, ' checks)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  ! A rank without edges: rank 0 has no sources and destinations (zero-length lists), ranks 1-3
  ! form a ring 1 -> 2 -> 3 -> 1. Blocking alltoallw with one integer per edge, so the shim reads a
  ! degree of 0 on rank 0 and converts no type there; rank 0's buffer is never written.
  subroutine isolated_rank()
    integer, allocatable :: src0(:), dst0(:)
    integer :: zc(1), zr(1), zs(1), zg(1), zerr
    integer(MPI_ADDRESS_KIND) :: zd(1)
    type(MPI_Datatype) :: zt(1)
    type(MPI_Comm) :: z
    if (me == 0) then
      allocate(src0(0), dst0(0))
    else
      dst0 = [modulo(me, 3) + 1]
      src0 = [modulo(me + 1, 3) + 1]
    end if
    call Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, size(src0), src0, size(dst0), dst0, MPI_INFO_NULL, z, zerr)
    call expect(zerr == MPI_SUCCESS, 'isolated rank: Cart_graph_comm_create_adjacent: ' // cart_error_message())
    zc = 1
    zr = 1
    zd = 0
    zt = MPI_INTEGER
    zs = 100 + me
    zg = -1
    call Cart_graph_neighbor_alltoallw(zs, zc, zd, zt, zg, zr, zd, zt, z, zerr)
    call expect(zerr == MPI_SUCCESS, 'isolated rank: Cart_graph_neighbor_alltoallw: ' // cart_error_message())
    if (me == 0) then
      call expect(zg(1) == -1, 'isolated rank: rank 0 received something')
    else
      call expect(zg(1) == 100 + src0(1), 'isolated rank: a ring value')
    end if
    zg = -1
    zs = 200 + me
    call Cart_graph_neighbor_alltoallw_c(zs, int(zc, MPI_COUNT_KIND), zd, zt, zg, int(zr, MPI_COUNT_KIND), zd, zt, z, zerr)
    call expect(zerr == MPI_SUCCESS, 'isolated rank: Cart_graph_neighbor_alltoallw_c: ' // cart_error_message())
    if (me == 0) then
      call expect(zg(1) == -1, 'isolated rank: rank 0 received something (_c)')
    else
      call expect(zg(1) == 200 + src0(1), 'isolated rank: a ring value (_c)')
    end if
    call MPI_Comm_free(z)
  end subroutine

  ! The v forms' count of edge s -> d (both ends compute it alike).
  integer function edge_count(s, d)
    integer, intent(in) :: s, d
    edge_count = 1 + mod(s + 2 * d, 3)
  end function

  ! Counts and displacements of the v and w forms (the same for every call).
  subroutine set_arguments()
    integer :: k, j, at, isz
    ! alltoallv: send blocks in reverse edge order with a gap of one element after each.
    at = 0
    do k = outdeg, 1, -1
      scounts(k) = edge_count(me, dst(k))
      sdispls(k) = at
      at = at + scounts(k) + 1
    end do
    ! allgatherv and alltoallv: receive blocks in edge order with gaps of one element.
    at = 0
    do j = 1, indeg
      rcounts(j) = edge_count(src(j), me)
      gcounts(j) = src(j) + 1
      rdispls(j) = at
      at = at + max(rcounts(j), src(j) + 1) + 1
    end do
    ! alltoallw: every block is two integers; odd edges a strided vector (every second element),
    ! even ones two contiguous integers; blocks 4 integers apart, in bytes.
    isz = storage_size(sbuf(1)) / 8
    do k = 1, outdeg
      wsd(k) = int((k - 1) * 4 * isz, MPI_ADDRESS_KIND)
      if (mod(k, 2) == 1) then
        wsc(k) = 1
        wst(k) = vec
      else
        wsc(k) = 2
        wst(k) = MPI_INTEGER
      end if
    end do
    do j = 1, indeg
      wrd(j) = int((indeg - j) * 4 * isz, MPI_ADDRESS_KIND)
      if (mod(j, 2) == 0) then
        wrc(j) = 1
        wrt(j) = vec
      else
        wrc(j) = 2
        wrt(j) = MPI_INTEGER
      end if
    end do
    ! The _c forms' copies (only the first outdeg / indeg entries are read).
    scounts_c = int(scounts, MPI_COUNT_KIND)
    rcounts_c = int(rcounts, MPI_COUNT_KIND)
    gcounts_c = int(gcounts, MPI_COUNT_KIND)
    wsc_c = int(wsc, MPI_COUNT_KIND)
    wrc_c = int(wrc, MPI_COUNT_KIND)
    sdispls_c = int(sdispls, MPI_ADDRESS_KIND)
    rdispls_c = int(rdispls, MPI_ADDRESS_KIND)
    na_c = int(na, MPI_COUNT_KIND)
    nt_c = int(nt, MPI_COUNT_KIND)
    me1_c = int(me + 1, MPI_COUNT_KIND)
  end subroutine

  ! Rank-, call- and round-dependent send data; receive buffers of -1.
  subroutine fill(round)
    integer, intent(in) :: round
    integer :: i
    sbuf = [(100000 * round + 10000 * op + 1000 * form + 100 * me + i, i = 1, nbuf)]
    rbuf = -1
    ref = -1
  end subroutine

  ! What MPI delivers for the same arguments, into ref.
  subroutine reference()
    select case (op)
    case (1)
      call MPI_Neighbor_allgather(sbuf, na, MPI_INTEGER, ref, na, MPI_INTEGER, dg)
    case (2)
      call MPI_Neighbor_alltoall(sbuf, nt, MPI_INTEGER, ref, nt, MPI_INTEGER, dg)
    case (3)
      call MPI_Neighbor_allgatherv(sbuf, me + 1, MPI_INTEGER, ref, gcounts, rdispls, MPI_INTEGER, dg)
    case (4)
      call MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, ref, rcounts, rdispls, MPI_INTEGER, dg)
    case default
      call MPI_Neighbor_alltoallw(sbuf, wsc, wsd, wst, ref, wrc, wrd, wrt, dg)
    end select
  end subroutine

  ! The cartplan call of op in form (0 blocking, 1 non-blocking, 2 persistent init) on g: the
  ! int call, or its _c form if large.
  subroutine cart_call()
    if (large) then
      call cart_call_c()
      return
    end if
    select case (op * 10 + form)
    case (10)
      call Cart_graph_neighbor_allgather(sbuf, na, MPI_INTEGER, rbuf, na, MPI_INTEGER, g, ierr)
    case (11)
      call Cart_graph_ineighbor_allgather(sbuf, na, MPI_INTEGER, rbuf, na, MPI_INTEGER, g, req, ierr)
    case (12)
      call Cart_graph_neighbor_allgather_init(sbuf, na, MPI_INTEGER, rbuf, na, MPI_INTEGER, g, info, req, ierr)
    case (20)
      call Cart_graph_neighbor_alltoall(sbuf, nt, MPI_INTEGER, rbuf, nt, MPI_INTEGER, g, ierr)
    case (21)
      call Cart_graph_ineighbor_alltoall(sbuf, nt, MPI_INTEGER, rbuf, nt, MPI_INTEGER, g, req, ierr)
    case (22)
      call Cart_graph_neighbor_alltoall_init(sbuf, nt, MPI_INTEGER, rbuf, nt, MPI_INTEGER, g, info, req, ierr)
    case (30)
      call Cart_graph_neighbor_allgatherv(sbuf, me + 1, MPI_INTEGER, rbuf, gcounts, rdispls, MPI_INTEGER, g, ierr)
    case (31)
      call Cart_graph_ineighbor_allgatherv(sbuf, me + 1, MPI_INTEGER, rbuf, gcounts, rdispls, MPI_INTEGER, g, req, ierr)
    case (32)
      call Cart_graph_neighbor_allgatherv_init(sbuf, me + 1, MPI_INTEGER, rbuf, gcounts, rdispls, MPI_INTEGER, g, info, &
                                               req, ierr)
    case (40)
      call Cart_graph_neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, MPI_INTEGER, g, ierr)
    case (41)
      call Cart_graph_ineighbor_alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, MPI_INTEGER, g, &
                                          req, ierr)
    case (42)
      call Cart_graph_neighbor_alltoallv_init(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, MPI_INTEGER, g, &
                                              info, req, ierr)
    case (50)
      call Cart_graph_neighbor_alltoallw(sbuf, wsc, wsd, wst, rbuf, wrc, wrd, wrt, g, ierr)
    case (51)
      call Cart_graph_ineighbor_alltoallw(sbuf, wsc, wsd, wst, rbuf, wrc, wrd, wrt, g, req, ierr)
    case (52)
      call Cart_graph_neighbor_alltoallw_init(sbuf, wsc, wsd, wst, rbuf, wrc, wrd, wrt, g, info, req, ierr)
    end select
  end subroutine

  ! As cart_call, the large-count _c forms with the _c copies of the arguments.
  subroutine cart_call_c()
    select case (op * 10 + form)
    case (10)
      call Cart_graph_neighbor_allgather_c(sbuf, na_c, MPI_INTEGER, rbuf, na_c, MPI_INTEGER, g, ierr)
    case (11)
      call Cart_graph_ineighbor_allgather_c(sbuf, na_c, MPI_INTEGER, rbuf, na_c, MPI_INTEGER, g, req, ierr)
    case (12)
      call Cart_graph_neighbor_allgather_init_c(sbuf, na_c, MPI_INTEGER, rbuf, na_c, MPI_INTEGER, g, info, req, ierr)
    case (20)
      call Cart_graph_neighbor_alltoall_c(sbuf, nt_c, MPI_INTEGER, rbuf, nt_c, MPI_INTEGER, g, ierr)
    case (21)
      call Cart_graph_ineighbor_alltoall_c(sbuf, nt_c, MPI_INTEGER, rbuf, nt_c, MPI_INTEGER, g, req, ierr)
    case (22)
      call Cart_graph_neighbor_alltoall_init_c(sbuf, nt_c, MPI_INTEGER, rbuf, nt_c, MPI_INTEGER, g, info, req, ierr)
    case (30)
      call Cart_graph_neighbor_allgatherv_c(sbuf, me1_c, MPI_INTEGER, rbuf, gcounts_c, rdispls_c, MPI_INTEGER, g, ierr)
    case (31)
      call Cart_graph_ineighbor_allgatherv_c(sbuf, me1_c, MPI_INTEGER, rbuf, gcounts_c, rdispls_c, MPI_INTEGER, g, req, ierr)
    case (32)
      call Cart_graph_neighbor_allgatherv_init_c(sbuf, me1_c, MPI_INTEGER, rbuf, gcounts_c, rdispls_c, MPI_INTEGER, g, &
                                                 info, req, ierr)
    case (40)
      call Cart_graph_neighbor_alltoallv_c(sbuf, scounts_c, sdispls_c, MPI_INTEGER, rbuf, rcounts_c, rdispls_c, &
                                           MPI_INTEGER, g, ierr)
    case (41)
      call Cart_graph_ineighbor_alltoallv_c(sbuf, scounts_c, sdispls_c, MPI_INTEGER, rbuf, rcounts_c, rdispls_c, &
                                            MPI_INTEGER, g, req, ierr)
    case (42)
      call Cart_graph_neighbor_alltoallv_init_c(sbuf, scounts_c, sdispls_c, MPI_INTEGER, rbuf, rcounts_c, rdispls_c, &
                                                MPI_INTEGER, g, info, req, ierr)
    case (50)
      call Cart_graph_neighbor_alltoallw_c(sbuf, wsc_c, wsd, wst, rbuf, wrc_c, wrd, wrt, g, ierr)
    case (51)
      call Cart_graph_ineighbor_alltoallw_c(sbuf, wsc_c, wsd, wst, rbuf, wrc_c, wrd, wrt, g, req, ierr)
    case (52)
      call Cart_graph_neighbor_alltoallw_init_c(sbuf, wsc_c, wsd, wst, rbuf, wrc_c, wrd, wrt, g, info, req, ierr)
    end select
  end subroutine

  ! op in form under algos(a) (the _c form if large): two rounds of data, each compared with what
  ! MPI delivers.
  subroutine run_case()
    character(len=:), allocatable :: what
    integer :: round
    logical :: done
    what = trim(algos(a)) // ' (graph comm ' // trim(graph_comms(a)) // ') ' // trim(forms(form)) // ' ' // &
           trim(op_names(op)) // trim(merge('_c', '  ', large))
    if (form == 2) then
      call fill(1)
      call cart_call()
      call expect(ierr == MPI_SUCCESS, what // ' init: ' // cart_error_message())
      if (ierr /= MPI_SUCCESS) return
      call check_request(what)
    end if
    do round = 1, 2
      call fill(round)
      if (form == 2) then
        call Cart_start(req, ierr)
        call expect(ierr == MPI_SUCCESS, what // ' Cart_start: ' // cart_error_message())
      else
        call cart_call()
        call expect(ierr == MPI_SUCCESS, what // ': ' // cart_error_message())
        if (form == 1) call check_request(what)
      end if
      if (form /= 0 .and. round == 1) then
        call Cart_wait(req, ierr)
        call expect(ierr == MPI_SUCCESS, what // ' Cart_wait: ' // cart_error_message())
      else if (form /= 0) then
        done = .false.
        do while (.not. done)
          call Cart_test(req, done, ierr)
          call expect(ierr == MPI_SUCCESS, what // ' Cart_test: ' // cart_error_message())
          if (ierr /= MPI_SUCCESS) exit
        end do
      end if
      call reference()
      call compare(what, round)
    end do
    if (form == 2) then
      call Cart_request_free(req, ierr)
      call expect(ierr == MPI_SUCCESS .and. cart_request_is_null(req), what // ' Cart_request_free')
    end if
  end subroutine

  ! The algorithm of a graph request: the forced one; grid's virtual grid is 2 x 2 at p = 4.
  subroutine check_request(what)
    character(len=*), intent(in) :: what
    alg = -1
    ndims = -1
    call Cart_graph_request_algorithm(req, alg, ierr)
    call expect(ierr == MPI_SUCCESS .and. alg == expected_algo(a), what // ': Cart_graph_request_algorithm')
    call Cart_graph_request_grid_dims(req, ndims, ierr)
    call expect(ierr == MPI_SUCCESS .and. ndims == merge(2, 0, algos(a) == 'grid'), what // ': Cart_graph_request_grid_dims')
  end subroutine

  subroutine compare(what, round)
    character(len=*), intent(in) :: what
    integer, intent(in) :: round
    integer :: i
    character(len=64) :: where
    call expect(count(ref /= -1) > 0, what // ': MPI delivered nothing (the test compares nothing)')
    if (large) then
      compared_c = compared_c + 1
    else
      compared = compared + 1
    end if
    do i = 1, nbuf
      if (rbuf(i) /= ref(i)) then
        write (where, '(a, i0, a, i0, a, i0, a, i0)') ' round ', round, ': element ', i, ' is ', rbuf(i), ', MPI gives ', ref(i)
        call expect(.false., what // trim(where))
        return
      end if
    end do
  end subroutine

  subroutine expect_class(code, class, what)
    integer, intent(in) :: code, class
    character(len=*), intent(in) :: what
    cls = MPI_SUCCESS
    if (code /= MPI_SUCCESS) call MPI_Error_class(code, cls)
    call expect(cls == class, what // ': ' // cart_error_message())
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    if (failures <= 20) write (*, '(a, i0, 2a)') 'graph_f08: rank ', me, ': FAILED: ', what
  end subroutine
end program graph_f08
