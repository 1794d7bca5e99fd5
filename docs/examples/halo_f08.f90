! halo_f08: the README's Fortran example (docs/api.md). A 2-D 9-point halo exchange on a 2x2 torus (run it on
! 4 ranks) through the cartplan_f08 module: the offsets come from Cart_neighbors, the exchange is
! a persistent Cart_alltoallw_init on subarray types of one array, and every cell is checked;
! then the helpers, a blocking and a non-blocking collective, the triangle type and an error.
!
!   mpif90 docs/examples/halo_f08.f90 $(pkg-config --cflags --libs cartplan-f08) -o halo_f08
!   mpirun -np 4 ./halo_f08
program halo_f08
  use mpi_f08
  use cartplan_f08
  implicit none
  integer, parameter :: n = 5, t_max = 8
  integer :: ierr, size, me, t, i, j, k, failures, total, coords(2), dims(2), periods(2)
  integer :: offsets(2, t_max), sizes(2), sub(2), sstart(2), rstart(2), counts(t_max), src, rel(2)
  integer(MPI_ADDRESS_KIND) :: displs(t_max)
  type(MPI_Datatype) :: stypes(t_max), rtypes(t_max), tri
  type(MPI_Comm) :: cart
  type(Cart_Request) :: req
  double precision :: a(0:n + 1, 0:n + 1)
  integer :: sendbuf(t_max), recvbuf(t_max), gathered(t_max)
  logical :: combining

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 4) then
    write (*, '(a, i0)') 'halo_f08: run me on 4 ranks (mpirun -np 4), not ', size
    call MPI_Finalize()
    stop 2
  end if
  failures = 0

  ! The Moore neighbourhood (Chebyshev distance 1) in lexicographic order.
  call Cart_neighbors_count(2, CART_CHEBYSHEV, 1, 1, t, ierr)
  call expect(ierr == MPI_SUCCESS .and. t == 8, 'Cart_neighbors_count')
  call Cart_neighbors(2, CART_CHEBYSHEV, 1, 1, t_max, offsets, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_neighbors')

  dims = [2, 2]
  periods = [1, 1]
  call Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, offsets, MPI_INFO_NULL, .false., cart, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_neighborhood_create: ' // cart_error_message())
  call MPI_Comm_rank(cart, me)
  call MPI_Cart_coords(cart, me, 2, coords)

  ! Interior cell (i, j) is global cell (coords(1)*n + i - 1, coords(2)*n + j - 1); halo cells start as -1.
  a = -1d0
  do j = 1, n
    do i = 1, n
      a(i, j) = value(coords(1) * n + i - 1, coords(2) * n + j - 1)
    end do
  end do

  ! Block k goes to +offset(:, k): the interior edge or corner on that side; it arrives from
  ! -offset(:, k) into the halo on the opposite side. Array dimension m is grid dimension m.
  sizes = [n + 2, n + 2]
  do k = 1, t
    do i = 1, 2
      if (offsets(i, k) == 0) then
        sub(i) = n
        sstart(i) = 1
        rstart(i) = 1
      else if (offsets(i, k) > 0) then
        sub(i) = 1
        sstart(i) = n
        rstart(i) = 0
      else
        sub(i) = 1
        sstart(i) = 1
        rstart(i) = n + 1
      end if
    end do
    call MPI_Type_create_subarray(2, sizes, sub, sstart, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, stypes(k))
    call MPI_Type_create_subarray(2, sizes, sub, rstart, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, rtypes(k))
    call MPI_Type_commit(stypes(k))
    call MPI_Type_commit(rtypes(k))
  end do
  counts = 1
  displs = 0

  call Cart_alltoallw_init(a, counts, displs, stypes, a, counts, displs, rtypes, cart, MPI_INFO_NULL, req, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_alltoallw_init: ' // cart_error_message())
  call Cart_request_algorithm(req, combining, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_request_algorithm')
  do k = 1, 3  ! a persistent request runs many times
    call Cart_start(req, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_start')
    call Cart_wait(req, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_wait')
  end do
  call Cart_request_free(req, ierr)
  call expect(ierr == MPI_SUCCESS .and. cart_request_is_null(req), 'Cart_request_free')
  ! On the torus every halo cell, corners included, holds its neighbour's interior value.
  do j = 0, n + 1
    do i = 0, n + 1
      call expect(a(i, j) == value(modulo(coords(1) * n + i - 1, 2 * n), modulo(coords(2) * n + j - 1, 2 * n)), 'halo cell')
    end do
  end do

  ! Helpers: the process at -offset(:, k) is the source of block k.
  call Cart_neighbor_count(cart, k, ierr)
  call expect(ierr == MPI_SUCCESS .and. k == t, 'Cart_neighbor_count')
  ! Blocking allgather: every rank sends its rank; block k comes from -offset(:, k).
  sendbuf(1) = me
  gathered = -1
  call Cart_allgather(sendbuf, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, cart, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_allgather')
  do k = 1, t
    call Cart_relative_rank(cart, -offsets(:, k), src, ierr)
    call expect(ierr == MPI_SUCCESS .and. gathered(k) == src, 'Cart_allgather block from -offset')
    call Cart_relative_coord(cart, src, rel, ierr)
    call expect(ierr == MPI_SUCCESS .and. all(modulo(rel + offsets(:, k), 2) == 0), 'Cart_relative_coord')
  end do
  ! Non-blocking alltoall: block k is 100*rank + k.
  sendbuf = [(100 * me + k, k = 1, t_max)]
  recvbuf = -1
  call Cart_ialltoall(sendbuf, 1, MPI_INTEGER, recvbuf, 1, MPI_INTEGER, cart, req, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_ialltoall')
  call Cart_wait(req, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_wait (non-blocking)')
  do k = 1, t
    call Cart_relative_rank(cart, -offsets(:, k), src, ierr)
    call expect(recvbuf(k) == 100 * src + k, 'Cart_ialltoall block')
  end do

  ! The corner block of a 5-point stencil with a halo of depth 4: a triangle of 4*3/2 cells.
  call Cart_type_create_triangle(3, n + 2, CART_TRIANGLE_LOWER_ANTI, MPI_DOUBLE_PRECISION, tri, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_type_create_triangle')
  call MPI_Type_size(tri, i)
  call expect(i == 6 * 8, 'triangle size')
  call MPI_Type_free(tri)

  ! Errors go to the communicator's error handler, as in MPI; with MPI_ERRORS_RETURN they come
  ! back as MPI error classes with a message.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call Cart_relative_rank(MPI_COMM_WORLD, [1, 0], src, ierr)
  call expect(ierr /= MPI_SUCCESS .and. len(cart_error_message()) > 0, 'error on a communicator without a neighbourhood')

  do k = 1, t
    call MPI_Type_free(stypes(k))
    call MPI_Type_free(rtypes(k))
  end do
  call MPI_Comm_free(cart)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    if (total == 0) then
      write (*, '(a, l1, a)') 'halo_f08: OK (combining=', combining, ')'
    else
      write (*, '(a, i0, a)') 'halo_f08: FAILED (', total, ' checks)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  double precision function value(gi, gj)
    integer, intent(in) :: gi, gj
    value = 1000d0 * gi + gj
  end function

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      if (failures <= 10) write (*, '(a, i0, 2a)') 'halo_f08: rank ', me, ' FAILED: ', what
    end if
  end subroutine
end program halo_f08
