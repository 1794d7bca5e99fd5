"""Compiler options applied to every cartplan target (not to third-party code)."""

CARTPLAN_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-sign-compare"]
