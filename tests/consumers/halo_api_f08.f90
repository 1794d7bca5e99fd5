! halo_api_f08: the halo API of the cartplan_f08 module, built against an installed prefix by
! tests/consumers/run.sh (4 ranks). A 2x2 grid, periodic in the first dimension only, a Fortran
! array a(0:n+1, -1:m+1) of doubles (ghost widths 1 and 1 in dimension 1, 2 and 1 in dimension
! 2), every region filled (Moore, the default of a plain MPI_Cart_create communicator). The
! interiors are the blocks of a 9 x 5 global array (n = 5 or 4 by the first coordinate, m = 3 or
! 2 by the second: interiors differ between ranks, docs/halo.md "Uneven interiors"). The
! interior holds rank- and cell-dependent values, the ghost cells -1; after Cart_halo_exchange
! and after each start of a Cart_halo_exchange_init request (new values each time), every ghost
! cell must hold its source's value (the process at coords + sign vector, its cell across the
! shared border: x - n below, x + the source's own extent above), or
! still -1 where that process is outside the mesh, and the interior must be unchanged. Also
! Cart_halo_plan's JSON, Cart_halo_request_plan's (the request's plan names a known algorithm,
! is the text the C function gives, through a bind(c) interface of this test, and in model mode
! equals the halo's plan; MPI_ERR_REQUEST for a null request), and a bad order (MPI_ERR_ARG on
! every rank). Then the _fields forms: two arrays of the same layout and different element types
! (real64 and default integer, by address with c_loc), other rank- and cell-dependent values,
! exchanged together by Cart_halo_exchange_fields and by a Cart_halo_exchange_fields_init
! request (new values each start), every cell of both checked by the same rule; the request's
! plan is priced for the two element sizes added up ("elem_bytes" of its JSON); bad input to
! both (a c_null_ptr address MPI_ERR_BUFFER, MPI_DATATYPE_NULL MPI_ERR_TYPE, count 0 and a
! count larger than the arrays passed MPI_ERR_COUNT, init wrong on rank 0 only MPI_ERR_COUNT on
! every rank), the halo working afterwards. The non-blocking forms (Cart_halo_iexchange and
! Cart_halo_iexchange_fields, completed by Cart_wait) by the same rules. Prints
! "halo_api_f08: OK" on rank 0 and exits 0 when every check passes on every rank, else exit 1.
program halo_api_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_null_ptr, c_char, c_associated, c_f_pointer, c_loc
  use, intrinsic :: iso_fortran_env, only: real64
  use mpi_f08
  use cartplan_f08
  implicit none
  integer, parameter :: global_n = 9, global_m = 5  ! cut into 2 x 2 blocks
  integer :: n, m  ! this rank's interior
  integer :: ierr, size, me, failures, total, iter, dims(2), periods(2), coords(2)
  integer :: interior(2), lo(2), hi(2)
  double precision, asynchronous, allocatable :: a(:, :)
  ! The fields: the same layout as a, other element types.
  real(real64), target, asynchronous, allocatable :: u(:, :)
  integer, target, asynchronous, allocatable :: flags(:, :)
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
  n = extent(global_n, coords(1))
  m = extent(global_m, coords(2))
  allocate(a(0:n+1, -1:m+1), u(0:n+1, -1:m+1), flags(0:n+1, -1:m+1))
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
  ! Non-blocking: started at once, completed (and the request nulled) by Cart_wait.
  call fill(7)
  call Cart_halo_iexchange(a, halo, req, ierr)
  call expect(ierr == MPI_SUCCESS, 'Cart_halo_iexchange: ' // cart_error_message())
  call Cart_wait(req, ierr)
  call expect(ierr == MPI_SUCCESS .and. cart_request_is_null(req), 'Cart_wait completes and nulls a non-blocking halo request')
  call check(7)
  call Cart_halo_free(halo, ierr)
  call expect(ierr == MPI_SUCCESS .and. c_halo_is_null(halo), 'Cart_halo_free')

  call fields_checks()

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

  ! The extent of block c (0 or 1) when g cells are cut into two: the first one more if g is odd.
  integer function extent(g, c)
    integer, intent(in) :: g, c
    extent = g / 2 + merge(1, 0, c < mod(g, 2))
  end function

  ! Where cell (i, j) gets its value, by the rule of cartplan_mpi.h: the rank and cell of its
  ! source (this rank and the cell itself in the interior); src = -1 for a ghost cell without a
  ! source in the mesh (it keeps its value).
  subroutine source_of(i, j, src, si, sj)
    integer, intent(in) :: i, j
    integer, intent(out) :: src, si, sj
    integer :: s1, s2, c(2)
    s1 = merge(-1, merge(1, 0, i > n), i < 1)
    s2 = merge(-1, merge(1, 0, j > m), j < 1)
    src = -1
    si = i
    sj = j
    if (s1 == 0 .and. s2 == 0) then
      src = me
    else
      c = [coords(1) + s1, coords(2) + s2]
      c(1) = modulo(c(1), 2)  ! periodic
      if (c(2) >= 0 .and. c(2) < 2) call MPI_Cart_rank(cart, c, src)
      ! Across the border: below it the source's last cells (its own extent), above it its first.
      if (s1 == 1) si = i - n
      if (s1 == -1) si = i + extent(global_n, c(1))
      if (s2 == 1) sj = j - m
      if (s2 == -1 .and. src >= 0) sj = j + extent(global_m, c(2))
    end if
  end subroutine

  ! The expected value of every cell of a.
  subroutine check(salt)
    integer, intent(in) :: salt
    integer :: i, j, src, si, sj, bad_cells
    double precision :: want
    bad_cells = 0
    do j = -1, m + 1
      do i = 0, n + 1
        call source_of(i, j, src, si, sj)
        want = -1
        if (src >= 0) want = value(src, si, sj, salt)
        if (a(i, j) /= want) bad_cells = bad_cells + 1
      end do
    end do
    call expect(bad_cells == 0, 'cells wrong after exchange')
  end subroutine

  ! The fields' values: u differs from a's values, flags is an integer code of rank, cell and salt.
  real(real64) function u_value(rank, i, j, salt)
    integer, intent(in) :: rank, i, j, salt
    u_value = -(rank * 1000 + i * 37 + j * 5) - salt * 0.25_real64 - 2
  end function

  integer function flag_value(rank, i, j, salt)
    integer, intent(in) :: rank, i, j, salt
    flag_value = 1 + rank * 100000 + i * 1000 + j * 10 + salt
  end function

  ! Interior cells of both fields from (me, salt), ghost cells -1.
  subroutine fill_fields(salt)
    integer, intent(in) :: salt
    integer :: i, j
    u = -1
    flags = -1
    do j = 1, m
      do i = 1, n
        u(i, j) = u_value(me, i, j, salt)
        flags(i, j) = flag_value(me, i, j, salt)
      end do
    end do
  end subroutine

  ! Every cell of both fields: its source's value, its own in the interior, -1 without a source.
  subroutine check_fields(salt, what)
    integer, intent(in) :: salt
    character(len=*), intent(in) :: what
    integer :: i, j, src, si, sj, bad_u, bad_flags
    bad_u = 0
    bad_flags = 0
    do j = -1, m + 1
      do i = 0, n + 1
        call source_of(i, j, src, si, sj)
        if (src < 0) then
          if (u(i, j) /= -1) bad_u = bad_u + 1
          if (flags(i, j) /= -1) bad_flags = bad_flags + 1
        else
          if (u(i, j) /= u_value(src, si, sj, salt)) bad_u = bad_u + 1
          if (flags(i, j) /= flag_value(src, si, sj, salt)) bad_flags = bad_flags + 1
        end if
      end do
    end do
    call expect(bad_u == 0, what // ': real64 field cells wrong')
    call expect(bad_flags == 0, what // ': integer field cells wrong')
  end subroutine

  ! Cart_halo_exchange_fields and Cart_halo_exchange_fields_init on u and flags together, with a
  ! halo created for doubles; the persistent request's plan is priced for both element sizes.
  subroutine fields_checks()
    type(Cart_Halo) :: fh
    type(Cart_Request) :: fr
    type(c_ptr) :: arrays(2)
    type(MPI_Datatype) :: types(2)
    character(len=:), allocatable :: plan
    character(len=32) :: want
    integer :: salt, size_u, size_flags
    types = [MPI_REAL8, MPI_INTEGER]
    arrays = [c_loc(u), c_loc(flags)]
    call MPI_Type_size(MPI_REAL8, size_u)
    call MPI_Type_size(MPI_INTEGER, size_flags)
    call Cart_halo_create(cart, 2, interior, lo, hi, MPI_DOUBLE_PRECISION, MPI_ORDER_FORTRAN, MPI_INFO_NULL, fh, ierr)
    call expect(ierr == MPI_SUCCESS, 'fields: Cart_halo_create: ' // cart_error_message())
    call fill_fields(10)
    call Cart_halo_exchange_fields(2, arrays, types, fh, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_halo_exchange_fields: ' // cart_error_message())
    call check_fields(10, 'Cart_halo_exchange_fields')
    call Cart_halo_exchange_fields_init(2, arrays, types, fh, MPI_INFO_NULL, fr, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_halo_exchange_fields_init: ' // cart_error_message())
    call Cart_halo_request_plan(fr, plan, ierr)
    write (want, '(a, i0)') '"elem_bytes": ', size_u + size_flags
    call expect(ierr == MPI_SUCCESS .and. known_algorithm(algorithm_of(plan)) .and. index(plan, trim(want)) > 0, &
                'the fields request''s plan is priced for ' // trim(want))
    do salt = 11, 13
      call fill_fields(salt)
      call Cart_start(fr, ierr)
      call expect(ierr == MPI_SUCCESS, 'fields: Cart_start: ' // cart_error_message())
      call Cart_wait(fr, ierr)
      call expect(ierr == MPI_SUCCESS, 'fields: Cart_wait: ' // cart_error_message())
      call check_fields(salt, 'Cart_halo_exchange_fields_init')
    end do
    call Cart_request_free(fr, ierr)
    call expect(ierr == MPI_SUCCESS .and. cart_request_is_null(fr), 'fields: Cart_request_free')
    call fill_fields(14)
    call Cart_halo_iexchange_fields(2, arrays, types, fh, fr, ierr)
    call expect(ierr == MPI_SUCCESS, 'Cart_halo_iexchange_fields: ' // cart_error_message())
    call Cart_wait(fr, ierr)
    call expect(ierr == MPI_SUCCESS .and. cart_request_is_null(fr), 'fields: Cart_wait of a non-blocking request')
    call check_fields(14, 'Cart_halo_iexchange_fields')
    call fields_bad_input(fh)
    call Cart_halo_free(fh, ierr)
  end subroutine

  ! Bad input to both fields forms, the same on every rank (init: on one rank too, agreed):
  ! a null address (MPI_ERR_BUFFER), MPI_DATATYPE_NULL (MPI_ERR_TYPE), count 0 and a count
  ! larger than the arrays given (MPI_ERR_COUNT, naming the count and both sizes); the halo still
  ! works afterwards.
  subroutine fields_bad_input(fh)
    type(Cart_Halo), intent(in) :: fh
    type(Cart_Request) :: fr
    type(c_ptr) :: good(2), null_one(2)
    type(MPI_Datatype) :: types(2), null_type(2)
    integer :: bad_count, k
    character(len=16) :: form
    good = [c_loc(u), c_loc(flags)]
    null_one = [c_loc(u), c_null_ptr]
    types = [MPI_REAL8, MPI_INTEGER]
    null_type = [MPI_REAL8, MPI_DATATYPE_NULL]
    do k = 1, 2
      form = merge('blocking  ', 'persistent', k == 1)
      call run_fields(k, 2, null_one, types, fh)
      call expect(ierr == MPI_ERR_BUFFER, 'fields ' // trim(form) // ': a c_null_ptr array is MPI_ERR_BUFFER')
      call run_fields(k, 2, good, null_type, fh)
      call expect(ierr == MPI_ERR_TYPE, 'fields ' // trim(form) // ': MPI_DATATYPE_NULL is MPI_ERR_TYPE')
      call run_fields(k, 0, good, types, fh)
      call expect(ierr == MPI_ERR_COUNT, 'fields ' // trim(form) // ': count 0 is MPI_ERR_COUNT')
      call run_fields(k, 3, good, types, fh)
      call expect(ierr == MPI_ERR_COUNT, 'fields ' // trim(form) // ': count 3 > size(arrays) is MPI_ERR_COUNT')
      call expect(index(cart_error_message(), 'count = 3 is larger than size(arrays) = 2 or size(types) = 2') > 0, &
                  'fields ' // trim(form) // ': the message names the count and sizes: ' // cart_error_message())
      call run_fields(k, 2, good, types(1:1), fh)
      call expect(ierr == MPI_ERR_COUNT, 'fields ' // trim(form) // ': count 2 > size(types) is MPI_ERR_COUNT')
      call expect(index(cart_error_message(), 'count = 2 is larger than size(arrays) = 2 or size(types) = 1') > 0, &
                  'fields ' // trim(form) // ': the message names the count and sizes: ' // cart_error_message())
    end do
    bad_count = merge(3, 2, me == 0)  ! only rank 0 is wrong: init agrees, every rank returns the error
    call Cart_halo_exchange_fields_init(bad_count, good, types, fh, MPI_INFO_NULL, fr, ierr)
    call expect(ierr == MPI_ERR_COUNT .and. cart_request_is_null(fr), &
                'fields init: count 3 on rank 0 only is MPI_ERR_COUNT everywhere')
    call fill_fields(20)
    call Cart_halo_exchange_fields(2, good, types, fh, ierr)
    call expect(ierr == MPI_SUCCESS, 'fields after bad input: ' // cart_error_message())
    call check_fields(20, 'Cart_halo_exchange_fields after bad input')
  end subroutine fields_bad_input

  ! One fields call of fields_bad_input: blocking (k = 1) or persistent (k = 2, whose refused
  ! init must leave a null request).
  subroutine run_fields(k, n, arrays, ts, fh)
    integer, intent(in) :: k, n
    type(c_ptr), intent(in) :: arrays(:)
    type(MPI_Datatype), intent(in) :: ts(:)
    type(Cart_Halo), intent(in) :: fh
    type(Cart_Request) :: fr
    if (k == 1) then
      call Cart_halo_exchange_fields(n, arrays, ts, fh, ierr)
    else
      call Cart_halo_exchange_fields_init(n, arrays, ts, fh, MPI_INFO_NULL, fr, ierr)
      call expect(cart_request_is_null(fr), 'fields init: a refused init gives a null request')
    end if
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (*, '(a, i0, 2a)') 'halo_api_f08: rank ', me, ': FAILED: ', what
  end subroutine
end program halo_api_f08
