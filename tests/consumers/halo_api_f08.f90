! halo_api_f08: the halo API of the cartplan_f08 module, built against an installed prefix by
! tests/consumers/run.sh (4 ranks). A 2x2 grid, periodic in the first dimension only, a Fortran
! array a(0:n+1, -1:m+1) of doubles (ghost widths 1 and 1 in dimension 1, 2 and 1 in dimension
! 2), every region filled (Moore, the default of a plain MPI_Cart_create communicator). The
! interior holds rank- and cell-dependent values, the ghost cells -1; after Cart_halo_exchange
! and after each start of a Cart_halo_exchange_init request (new values each time), every ghost
! cell must hold its source's value (the process at coords + sign vector, cell x - sign * n), or
! still -1 where that process is outside the mesh, and the interior must be unchanged. Also
! Cart_halo_plan's JSON, Cart_halo_request_plan's (the request's plan names a known algorithm,
! is the text the C function gives, through a bind(c) interface of this test, and in model mode
! equals the halo's plan; MPI_ERR_REQUEST for a null request), and a bad order (MPI_ERR_ARG on
! every rank). Prints "halo_api_f08: OK" on
! rank 0 and exits 0 when every check passes on every rank, else exit 1.
program halo_api_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_null_ptr, c_char, c_associated, c_f_pointer
  use mpi_f08
  use cartplan_f08
  implicit none
  integer, parameter :: n = 4, m = 3
  integer :: ierr, size, me, failures, total, iter, dims(2), periods(2), coords(2)
  integer :: interior(2), lo(2), hi(2)
  double precision, asynchronous :: a(0:n+1, -1:m+1)
  type(MPI_Comm) :: cart
  type(Cart_Halo) :: halo, bad
  type(Cart_Request) :: req, none
  character(len=:), allocatable :: json, runs
  interface
    ! The C function itself, to compare the module's answer with.
    integer(c_int) function c_halo_request_plan(r, text) bind(c, name="Cart_halo_request_plan")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      type(c_ptr), intent(out) :: text
    end function
    subroutine c_free_plan_json(text) bind(c, name="Cart_free_plan_json")
      import :: c_ptr
      type(c_ptr), value :: text
    end subroutine
  end interface

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 4) then
    write (*, '(a, i0)') 'halo_api_f08: run me on 4 ranks, not ', size
    call MPI_Finalize()
    stop 2
  end if
  failures = 0
  dims = [2, 2]
  periods = [1, 0]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, [.true., .false.], .false., cart)
  call MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)  ! where a null request's error goes
  call MPI_Cart_coords(cart, me, 2, coords)
  interior = [n, m]
  lo = [1, 2]
  hi = [1, 1]
  call Cart_halo_create(cart, 2, interior, lo, hi, MPI_DOUBLE_PRECISION, MPI_ORDER_FORTRAN, MPI_INFO_NULL, halo, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_halo_create: ' // cart_error_message())
  call Cart_halo_plan(halo, json, ierr)
  call expect(ierr == MPI_SUCCESS .and. index(json, '"schema": "cartplan.halo_plan/1"') > 0, 'Cart_halo_plan')

  call fill(0)
  call Cart_halo_exchange(a, halo, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_halo_exchange')
  call check(0)
  call Cart_halo_exchange_init(a, halo, MPI_INFO_NULL, req, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_halo_exchange_init')
  call Cart_halo_request_plan(req, runs, ierr)
  call expect(ierr == MPI_SUCCESS .and. known_algorithm(algorithm_of(runs)), &
              'Cart_halo_request_plan names a known algorithm: ' // algorithm_of(runs))
  call expect(runs == c_request_plan_text(req), 'Cart_halo_request_plan is the C function''s text')
  call expect(runs == json, 'Cart_halo_request_plan is the halo''s plan (model mode)')
  call Cart_halo_request_plan(none, runs, ierr)
  call expect(ierr == MPI_ERR_REQUEST .and. len(runs) == 0, 'Cart_halo_request_plan of a null request is MPI_ERR_REQUEST')
  do iter = 1, 5
    call fill(iter)
    call Cart_start(req, ierr)
    call Cart_wait(req, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_start / Cart_wait')
    call check(iter)
  end do
  call Cart_request_free(req, ierr)
  call Cart_halo_free(halo, ierr)
  call expect(ierr == MPI_SUCCESS .and. c_halo_is_null(halo), 'Cart_halo_free')

  call Cart_halo_create(cart, 2, interior, lo, hi, MPI_DOUBLE_PRECISION, 12345, MPI_INFO_NULL, bad, ierr)
  call expect(ierr == MPI_ERR_ARG, 'a bad order is MPI_ERR_ARG on every rank')

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0 .and. total == 0) write (*, '(a)') 'halo_api_f08: OK'
  call MPI_Comm_free(cart)
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  ! The text Cart_halo_request_plan gives in C ("" on error).
  function c_request_plan_text(r) result(text)
    type(Cart_Request), intent(in) :: r
    character(len=:), allocatable :: text
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: k
    p = c_null_ptr
    text = ''
    if (c_halo_request_plan(r%handle, p) /= MPI_SUCCESS .or. .not. c_associated(p)) return
    call c_f_pointer(p, chars, [huge(0)])
    k = 0
    do while (chars(k + 1) /= char(0))
      k = k + 1
    end do
    text = repeat(' ', k)
    do k = 1, len(text)
      text(k:k) = chars(k)
    end do
    call c_free_plan_json(p)
  end function

  ! The value of the plan's "algorithm" field ("" if it has none).
  function algorithm_of(text) result(name)
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: name
    character(len=*), parameter :: key = '"algorithm": "'
    integer :: at, stop_at
    name = ''
    at = index(text, key)
    if (at == 0) return
    stop_at = index(text(at + len(key):), '"')
    if (stop_at > 0) name = text(at + len(key):at + len(key) + stop_at - 2)
  end function

  logical function known_algorithm(name)
    character(len=*), intent(in) :: name
    known_algorithm = name == 'direct' .or. name == 'combining' .or. name == 'dimwise' .or. name == 'split' .or. &
                      name == 'hybrid'
  end function

  logical function c_halo_is_null(h)
    use, intrinsic :: iso_c_binding, only: c_associated
    type(Cart_Halo), intent(in) :: h
    c_halo_is_null = .not. c_associated(h%handle)
  end function

  double precision function value(rank, i, j, salt)
    integer, intent(in) :: rank, i, j, salt
    value = rank * 10000 + i * 100 + j + salt * 0.5d0
  end function

  subroutine fill(salt)
    integer, intent(in) :: salt
    integer :: i, j
    a = -1
    do j = 1, m
      do i = 1, n
        a(i, j) = value(me, i, j, salt)
      end do
    end do
  end subroutine

  ! The expected value of every cell, by the rule of cartplan_mpi.h.
  subroutine check(salt)
    integer, intent(in) :: salt
    integer :: i, j, s1, s2, c(2), src, bad_cells
    double precision :: want
    bad_cells = 0
    do j = -1, m + 1
      do i = 0, n + 1
        s1 = merge(-1, merge(1, 0, i > n), i < 1)
        s2 = merge(-1, merge(1, 0, j > m), j < 1)
        want = -1
        if (s1 == 0 .and. s2 == 0) then
          want = value(me, i, j, salt)
        else
          c = [coords(1) + s1, coords(2) + s2]
          c(1) = modulo(c(1), 2)  ! periodic
          if (c(2) >= 0 .and. c(2) < 2) then
            call MPI_Cart_rank(cart, c, src)
            want = value(src, i - s1 * n, j - s2 * m, salt)
          end if
        end if
        if (a(i, j) /= want) bad_cells = bad_cells + 1
      end do
    end do
    call expect(bad_cells == 0, 'cells wrong after exchange')
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (*, '(a, i0, 2a)') 'halo_api_f08: rank ', me, ': FAILED: ', what
  end subroutine
end program halo_api_f08
