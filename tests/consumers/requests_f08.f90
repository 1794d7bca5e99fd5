! requests_f08: the cartplan_f08 module's request arrays, plan/program text and large-count forms,
! built against an installed prefix by tests/consumers/run.sh (4 ranks, a 2x2 torus, Moore
! neighbourhood). Two persistent requests (Cart_alltoall_init and Cart_allgatherv_init_c) run
! together with Cart_startall + Cart_waitall and Cart_startall + Cart_testall; Cart_request_plan
! and Cart_request_program return their JSON; Cart_alltoall_c runs once. Prints
! "requests_f08: OK" on rank 0 and exits 0 when every check passes on every rank, else exit 1.
program requests_f08
  use mpi_f08
  use cartplan_f08
  implicit none
  integer, parameter :: t_max = 8
  integer :: ierr, size, me, t, k, src, iter, failures, total, offsets(2, t_max), dims(2), periods(2)
  integer, asynchronous :: sendbuf(t_max), recvbuf(t_max), mine(1), gathered(t_max)
  integer(MPI_COUNT_KIND) :: counts_c(t_max), one_c
  integer(MPI_ADDRESS_KIND) :: displs_c(t_max)
  type(MPI_Comm) :: cart
  type(Cart_Request) :: reqs(2)
  character(len=:), allocatable :: json
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 4) then
    write (*, '(a, i0)') 'requests_f08: run me on 4 ranks, not ', size
    call MPI_Finalize()
    stop 2
  end if
  failures = 0

  call Cart_neighbors_count(2, CART_CHEBYSHEV, 1, 1, t, ierr)
  call expect(ierr == MPI_SUCCESS .and. t == t_max, 'Cart_neighbors_count')
  call Cart_neighbors(2, CART_CHEBYSHEV, 1, 1, t_max, offsets, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_neighbors')
  dims = [2, 2]
  periods = [1, 1]
  call Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, offsets, MPI_INFO_NULL, .false., cart, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_neighborhood_create: ' // cart_error_message())
  call MPI_Comm_rank(cart, me)

  ! Two persistent requests: an alltoall (block k is 100*rank + k + 1000*iter) and a large-count
  ! allgatherv (every rank contributes 10*rank + iter; block k at element k-1).
  counts_c = 1
  displs_c = [(int(k - 1, MPI_ADDRESS_KIND), k = 1, t_max)]
  one_c = 1
  call Cart_alltoall_init(sendbuf, 1, MPI_INTEGER, recvbuf, 1, MPI_INTEGER, cart, MPI_INFO_NULL, reqs(1), ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_alltoall_init: ' // cart_error_message())
  call Cart_allgatherv_init_c(mine, one_c, MPI_INTEGER, gathered, counts_c, displs_c, MPI_INTEGER, cart, MPI_INFO_NULL, &
                              reqs(2), ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_allgatherv_init_c: ' // cart_error_message())

  do iter = 1, 4
    sendbuf = [(100 * me + k + 1000 * iter, k = 1, t_max)]
    mine(1) = 10 * me + iter
    recvbuf = -1
    gathered = -1
    call Cart_startall(2, reqs, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_startall: ' // cart_error_message())
    if (mod(iter, 2) == 1) then
      call Cart_waitall(2, reqs, ierr)
      call expect(ierr == MPI_SUCCESS, 'Cart_waitall: ' // cart_error_message())
    else
      flag = .false.
      do while (.not. flag)
        call Cart_testall(2, reqs, flag, ierr)
        call expect(ierr == MPI_SUCCESS, 'Cart_testall: ' // cart_error_message())
        if (ierr /= MPI_SUCCESS) exit
      end do
    end if
    do k = 1, t
      call Cart_relative_rank(cart, -offsets(:, k), src, ierr)
      call expect(recvbuf(k) == 100 * src + k + 1000 * iter, 'alltoall block after Cart_waitall/Cart_testall')
      call expect(gathered(k) == 10 * src + iter, 'allgatherv_c block after Cart_waitall/Cart_testall')
    end do
  end do
  ! Persistent requests stay allocated after completion.
  call expect(.not. cart_request_is_null(reqs(1)) .and. .not. cart_request_is_null(reqs(2)), 'requests kept')

  call Cart_request_plan(reqs(1), json, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_request_plan: ' // cart_error_message())
  call expect(len(json) > 0, 'Cart_request_plan: empty text')
  if (len(json) > 0) call expect(json(1:1) == '{', 'Cart_request_plan: text does not start with {')
  call expect(index(json, 'cartplan.plan') > 0, 'Cart_request_plan: no "cartplan.plan"')
  call Cart_request_program(reqs(2), json, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_request_program: ' // cart_error_message())
  call expect(index(json, 'cartplan.program/2') > 0, 'Cart_request_program: no "cartplan.program/2"')
  ! A null request is an error (MPI_ERR_REQUEST) and gives "".
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call Cart_request_plan(Cart_Request(), json, ierr)
  call expect(ierr /= MPI_SUCCESS .and. len(json) == 0, 'Cart_request_plan of a null request')

  call Cart_request_free(reqs(1), ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_request_free 1')
  call Cart_request_free(reqs(2), ierr)
  call expect(ierr == MPI_SUCCESS .and. cart_request_is_null(reqs(2)), 'Cart_request_free 2')

  ! A blocking large-count form.
  sendbuf = [(100 * me + k, k = 1, t_max)]
  recvbuf = -1
  call Cart_alltoall_c(sendbuf, one_c, MPI_INTEGER, recvbuf, one_c, MPI_INTEGER, cart, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_alltoall_c: ' // cart_error_message())
  do k = 1, t
    call Cart_relative_rank(cart, -offsets(:, k), src, ierr)
    call expect(recvbuf(k) == 100 * src + k, 'Cart_alltoall_c block')
  end do

  call MPI_Comm_free(cart)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
    if (total == 0) then
      write (*, '(a)') 'requests_f08: OK'
    else
      write (*, '(a, i0, a)') 'requests_f08: FAILED (', total, ' checks)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      if (failures <= 10) write (*, '(a, i0, 2a)') 'requests_f08: rank ', me, ' FAILED: ', what
    end if
  end subroutine
end program requests_f08
