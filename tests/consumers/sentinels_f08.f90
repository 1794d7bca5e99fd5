! sentinels_f08: mpi_f08's MPI_BOTTOM and MPI_IN_PLACE through the cartplan_f08 module (tests/consumers/run.sh, 4 ranks).
!
! MPI_BOTTOM: alltoallw with one send and one receive block per edge in two arrays each (odd
! edges two integers, even edges a strided vector of two), displacements from MPI_Get_address,
! every element compared with mpi_f08's MPI_Neighbor_alltoallw on MPI_BOTTOM with the same
! addresses into reference arrays: Cart_graph_neighbor_alltoallw, its _c form and its persistent
! form (started twice with new data) on an irregular graph (a duplicate and a self edge), and
! Cart_alltoallw, Cart_alltoallw_c and Cart_alltoallw_init on a 2x2 torus with the von Neumann
! neighbourhood (the reference on MPI_Dist_graph_create_adjacent with Cart_graph_get's lists).
! MPI_IN_PLACE as a send or receive buffer of Cartesian and graph collectives (blocking,
! non-blocking, persistent, int and _c): MPI_ERR_ARG naming MPI_IN_PLACE, under MPI_ERRORS_RETURN.
! No call bound by the module has an in-place form (cartplan's reductions refuse MPI_IN_PLACE
! too, and are not bound). MPI_BOTTOM and MPI_IN_PLACE as a halo array: MPI_ERR_BUFFER naming it.
! Prints "sentinels_f08: OK" on rank 0 and exits 0 when every check passes on every rank, else exit 1.
program sentinels_f08
  use mpi_f08
  use cartplan_f08
  implicit none
  integer, parameter :: nbuf = 40, t_max = 8
  integer :: me, nranks, ierr, cls, failures, total, indeg, outdeg, t, k, iter
  integer, allocatable :: src(:), dst(:)
  ! Send arrays, receive arrays (cartplan) and reference receive arrays (MPI), reached by address.
  integer, asynchronous, target :: sa(nbuf), sb(nbuf), ra(nbuf), rb(nbuf), qa(nbuf), qb(nbuf)
  integer, asynchronous :: sbuf(t_max), rbuf(t_max)
  integer :: scounts(t_max), rcounts(t_max)
  integer(MPI_COUNT_KIND) :: scounts_c(t_max), rcounts_c(t_max), one_c
  integer(MPI_ADDRESS_KIND) :: sdispls(t_max), rdispls(t_max), qdispls(t_max)
  type(MPI_Datatype) :: stypes(t_max), rtypes(t_max), vec
  type(MPI_Comm) :: g, dg, cart, dgc
  type(Cart_Request) :: req

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  if (nranks /= 4) then
    write (*, '(a, i0)') 'sentinels_f08: run me on 4 ranks, not ', nranks
    call MPI_Finalize()
    stop 2
  end if
  failures = 0
  one_c = 1
  call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  call make_communicators()

  call graph_bottom()
  call cart_bottom()
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN)
  call in_place_refused()
  call halo_refused()

  call MPI_Type_free(vec)
  call MPI_Comm_free(g)
  call MPI_Comm_free(dg)
  call MPI_Comm_free(cart)
  call MPI_Comm_free(dgc)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    if (total == 0) then
      write (*, '(a)') 'sentinels_f08: OK'
    else
      write (*, '(a, i0, a)') 'sentinels_f08: FAILED (', total, ' checks)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  ! g and dg: graph_f08's irregular graph (0 -> 1 twice, 2 -> 2) by cartplan and by MPI; cart: a
  ! 2x2 torus, von Neumann neighbourhood (t = 4, each neighbour twice), and dgc its lists as an
  ! MPI distributed graph. No degree above the communicator's size: Open MPI 4.1's Fortran
  ! MPI_Neighbor_alltoallw converts only that many datatypes (open-mpi/ompi#10740).
  subroutine make_communicators()
    integer :: offsets(2, t_max), sources(t_max), targets(t_max)
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
    call Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, indeg, src, outdeg, dst, MPI_INFO_NULL, g, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_graph_comm_create_adjacent: ' // cart_error_message())
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, src, MPI_UNWEIGHTED, outdeg, dst, MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .false., dg)
    call Cart_neighbors_count(2, CART_MANHATTAN, 1, 1, t, ierr)
    call expect(ierr == MPI_SUCCESS .and. t == 4, 'Cart_neighbors_count')
    call Cart_neighbors(2, CART_MANHATTAN, 1, 1, t_max, offsets, ierr)
    call Cart_neighborhood_create(MPI_COMM_WORLD, 2, [2, 2], [1, 1], t, offsets, MPI_INFO_NULL, .false., cart, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_neighborhood_create: ' // cart_error_message())
    call Cart_graph_get(cart, t_max, sources, t_max, targets, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_graph_get: ' // cart_error_message())
    call MPI_Dist_graph_create_adjacent(cart, t, sources, MPI_UNWEIGHTED, t, targets, MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .false., dgc)
  end subroutine

  ! The w arguments of n edges at absolute addresses in a (odd edges: two integers at 4j-3) and
  ! b (even edges: one vec, integers 4j-3 and 4j-1).
  subroutine w_args(n, a, b, counts, displs, types)
    integer, intent(in) :: n
    integer, asynchronous, target :: a(nbuf), b(nbuf)
    integer, intent(out) :: counts(t_max)
    integer(MPI_ADDRESS_KIND), intent(out) :: displs(t_max)
    type(MPI_Datatype), intent(out) :: types(t_max)
    integer :: j
    do j = 1, n
      if (mod(j, 2) == 1) then
        call MPI_Get_address(a(4 * j - 3), displs(j))
        counts(j) = 2
        types(j) = MPI_INTEGER
      else
        call MPI_Get_address(b(4 * j - 3), displs(j))
        counts(j) = 1
        types(j) = vec
      end if
    end do
  end subroutine

  ! New send data (round `iter`), all receive arrays -1, and the arguments for nin and nout edges.
  subroutine prepare(nin, nout)
    integer, intent(in) :: nin, nout
    sa = [(100000 * iter + 1000 * me + k, k = 1, nbuf)]
    sb = [(100000 * iter + 1000 * me + 500 + k, k = 1, nbuf)]
    ra = -1
    rb = -1
    qa = -1
    qb = -1
    call w_args(nout, sa, sb, scounts, sdispls, stypes)
    call w_args(nin, ra, rb, rcounts, rdispls, rtypes)
    call w_args(nin, qa, qb, rcounts, qdispls, rtypes)
    scounts_c = scounts
    rcounts_c = rcounts
  end subroutine

  ! cartplan's receive arrays against MPI's, element by element; nin edges of two integers each.
  subroutine compare(nin, what)
    integer, intent(in) :: nin
    character(len=*), intent(in) :: what
    call MPI_F_sync_reg(ra)
    call MPI_F_sync_reg(rb)
    call MPI_F_sync_reg(qa)
    call MPI_F_sync_reg(qb)
    call expect(count(qa /= -1) + count(qb /= -1) == 2 * nin, what // ': MPI reference received another amount')
    call expect(all(ra == qa) .and. all(rb == qb), what // ': receive arrays differ from MPI_Neighbor_alltoallw')
  end subroutine

  ! Graph alltoallw on MPI_BOTTOM: blocking, _c, persistent (init once, two rounds of data).
  subroutine graph_bottom()
    iter = 1
    call prepare(indeg, outdeg)
    call MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, qdispls, rtypes, dg)
    call Cart_graph_neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, rdispls, rtypes, g, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_graph_neighbor_alltoallw on MPI_BOTTOM: ' // cart_error_message())
    call compare(indeg, 'Cart_graph_neighbor_alltoallw on MPI_BOTTOM')
    iter = 2
    call prepare(indeg, outdeg)
    call MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, qdispls, rtypes, dg)
    call Cart_graph_neighbor_alltoallw_c(MPI_BOTTOM, scounts_c, sdispls, stypes, MPI_BOTTOM, rcounts_c, rdispls, rtypes, &
                                         g, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_graph_neighbor_alltoallw_c on MPI_BOTTOM: ' // cart_error_message())
    call compare(indeg, 'Cart_graph_neighbor_alltoallw_c on MPI_BOTTOM')
    iter = 3
    call prepare(indeg, outdeg)
    call Cart_graph_neighbor_alltoallw_init(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, rdispls, rtypes, &
                                            g, MPI_INFO_NULL, req, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_graph_neighbor_alltoallw_init on MPI_BOTTOM: ' // cart_error_message())
    do iter = 3, 4
      call prepare(indeg, outdeg)  ! the same addresses: the request's arguments stay valid
      call MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, qdispls, rtypes, dg)
      call Cart_start(req, ierr)
      call Cart_wait(req, ierr)
      call expect(ierr == MPI_SUCCESS, 'persistent graph alltoallw on MPI_BOTTOM: ' // cart_error_message())
      call compare(indeg, 'Cart_graph_neighbor_alltoallw_init on MPI_BOTTOM')
    end do
    call Cart_request_free(req, ierr)
  end subroutine

  ! Cartesian alltoallw on MPI_BOTTOM: blocking, _c, persistent, against MPI on dgc.
  subroutine cart_bottom()
    iter = 5
    call prepare(t, t)
    call MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, qdispls, rtypes, dgc)
    call Cart_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, rdispls, rtypes, cart, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_alltoallw on MPI_BOTTOM: ' // cart_error_message())
    call compare(t, 'Cart_alltoallw on MPI_BOTTOM')
    iter = 6
    call prepare(t, t)
    call MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, qdispls, rtypes, dgc)
    call Cart_alltoallw_c(MPI_BOTTOM, scounts_c, sdispls, stypes, MPI_BOTTOM, rcounts_c, rdispls, rtypes, cart, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_alltoallw_c on MPI_BOTTOM: ' // cart_error_message())
    call compare(t, 'Cart_alltoallw_c on MPI_BOTTOM')
    call Cart_alltoallw_init(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, rdispls, rtypes, cart, &
                             MPI_INFO_NULL, req, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_alltoallw_init on MPI_BOTTOM: ' // cart_error_message())
    do iter = 7, 8
      call prepare(t, t)
      call MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, qdispls, rtypes, dgc)
      call Cart_start(req, ierr)
      call Cart_wait(req, ierr)
      call expect(ierr == MPI_SUCCESS, 'persistent Cartesian alltoallw on MPI_BOTTOM: ' // cart_error_message())
      call compare(t, 'Cart_alltoallw_init on MPI_BOTTOM')
    end do
    call Cart_request_free(req, ierr)
  end subroutine

  ! MPI_IN_PLACE in neighbourhood collectives: MPI_ERR_ARG naming it, no request made.
  subroutine in_place_refused()
    sbuf = 1
    rbuf = -1
    call Cart_alltoall(MPI_IN_PLACE, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, cart, ierr)
    call expect_in_place(ierr, 'Cart_alltoall, sendbuf MPI_IN_PLACE')
    call Cart_allgather(sbuf, 1, MPI_INTEGER, MPI_IN_PLACE, 1, MPI_INTEGER, cart, ierr)
    call expect_in_place(ierr, 'Cart_allgather, recvbuf MPI_IN_PLACE')
    iter = 9
    call prepare(t, t)
    call Cart_ialltoallw_c(MPI_IN_PLACE, scounts_c, sdispls, stypes, MPI_BOTTOM, rcounts_c, rdispls, rtypes, cart, req, ierr)
    call expect_in_place(ierr, 'Cart_ialltoallw_c, sendbuf MPI_IN_PLACE')
    call expect(cart_request_is_null(req), 'Cart_ialltoallw_c with MPI_IN_PLACE made a request')
    call Cart_allgather_init(MPI_IN_PLACE, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, cart, MPI_INFO_NULL, req, ierr)
    call expect_in_place(ierr, 'Cart_allgather_init, sendbuf MPI_IN_PLACE')
    call Cart_graph_neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, g, ierr)
    call expect_in_place(ierr, 'Cart_graph_neighbor_alltoall, sendbuf MPI_IN_PLACE')
    call Cart_graph_neighbor_allgather(sbuf, 1, MPI_INTEGER, MPI_IN_PLACE, 1, MPI_INTEGER, g, ierr)
    call expect_in_place(ierr, 'Cart_graph_neighbor_allgather, recvbuf MPI_IN_PLACE')
    iter = 10
    call prepare(indeg, outdeg)
    call Cart_graph_neighbor_alltoallw(MPI_IN_PLACE, scounts, sdispls, stypes, MPI_BOTTOM, rcounts, rdispls, rtypes, g, ierr)
    call expect_in_place(ierr, 'Cart_graph_neighbor_alltoallw, sendbuf MPI_IN_PLACE')
    call Cart_graph_ineighbor_alltoall_c(MPI_IN_PLACE, one_c, MPI_INTEGER, rbuf, one_c, MPI_INTEGER, g, req, ierr)
    call expect_in_place(ierr, 'Cart_graph_ineighbor_alltoall_c, sendbuf MPI_IN_PLACE')
    call expect(cart_request_is_null(req), 'Cart_graph_ineighbor_alltoall_c with MPI_IN_PLACE made a request')
    call Cart_graph_neighbor_alltoallw_init_c(MPI_IN_PLACE, scounts_c, sdispls, stypes, MPI_BOTTOM, rcounts_c, rdispls, &
                                              rtypes, g, MPI_INFO_NULL, req, ierr)
    call expect_in_place(ierr, 'Cart_graph_neighbor_alltoallw_init_c, sendbuf MPI_IN_PLACE')
  end subroutine

  ! MPI_BOTTOM and MPI_IN_PLACE as a halo array: MPI_ERR_BUFFER naming them.
  subroutine halo_refused()
    type(Cart_Halo) :: halo
    call Cart_halo_create(cart, 2, [2, 2], [1, 1], [1, 1], MPI_INTEGER, MPI_ORDER_FORTRAN, MPI_INFO_NULL, halo, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_halo_create: ' // cart_error_message())
    call Cart_halo_exchange(MPI_BOTTOM, halo, ierr)
    call expect_refused(ierr, MPI_ERR_BUFFER, 'MPI_BOTTOM', 'Cart_halo_exchange of MPI_BOTTOM')
    call Cart_halo_exchange(MPI_IN_PLACE, halo, ierr)
    call expect_refused(ierr, MPI_ERR_BUFFER, 'MPI_IN_PLACE', 'Cart_halo_exchange of MPI_IN_PLACE')
    call Cart_halo_iexchange(MPI_IN_PLACE, halo, req, ierr)
    call expect_refused(ierr, MPI_ERR_BUFFER, 'MPI_IN_PLACE', 'Cart_halo_iexchange of MPI_IN_PLACE')
    call Cart_halo_exchange_init(MPI_BOTTOM, halo, MPI_INFO_NULL, req, ierr)
    call expect_refused(ierr, MPI_ERR_BUFFER, 'MPI_BOTTOM', 'Cart_halo_exchange_init of MPI_BOTTOM')
    call Cart_halo_free(halo, ierr)
  end subroutine

  subroutine expect_in_place(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    call expect_refused(code, MPI_ERR_ARG, 'MPI_IN_PLACE', what)
    call expect(cart_request_is_null(req), what // ': a request was made')
  end subroutine

  ! An error of class `class` whose message names `words`.
  subroutine expect_refused(code, class, words, what)
    integer, intent(in) :: code, class
    character(len=*), intent(in) :: words, what
    cls = MPI_SUCCESS
    if (code /= MPI_SUCCESS) call MPI_Error_class(code, cls)
    call expect(cls == class, what // ': expected another error class; ' // cart_error_message())
    if (cls == class) call expect(index(cart_error_message(), words) > 0, what // ': the message does not name ' // &
                                  words // ': ' // cart_error_message())
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    if (failures <= 20) write (*, '(a, i0, 2a)') 'sentinels_f08: rank ', me, ' FAILED: ', what
  end subroutine
end program sentinels_f08
