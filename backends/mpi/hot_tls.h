// CARTPLAN_HOT_TLS: the TLS model of the few thread_locals that every call reads (the progress
// registries' depths and lists).
//
//   thread_local int depth CARTPLAN_HOT_TLS = 0;
//
// In a shared library (the drop-in, libcartplan.so) the default model makes every access a call
// to __tls_get_addr; initial-exec is one load from the thread pointer. It is right where the
// library is linked into the program or preloaded, and still loads when it is dlopened (a
// Python extension) while glibc's static TLS surplus has room for these few bytes. Not under
// SMPI: there every simulated rank dlopens its own copy of the program, whose initial-exec TLS
// would soon exhaust that surplus.
#pragma once

#ifdef CARTPLAN_SMPI
#define CARTPLAN_HOT_TLS
#else
#define CARTPLAN_HOT_TLS __attribute__((tls_model("initial-exec")))
#endif
