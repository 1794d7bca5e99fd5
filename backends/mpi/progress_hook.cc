// Finding Open MPI's progress-callback registration at run time (see progress_hook.h).
#include "backends/mpi/progress_hook.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace cartplan::mpi {
namespace {

using RegisterFn = int (*)(ProgressCallback);

struct Hook {
  RegisterFn reg = nullptr, unreg = nullptr;
};

// RTLD_DEFAULT finds libopen-pal when libmpi was loaded with the program or preloaded; when
// cartplan sits in a library opened with RTLD_LOCAL (a Python extension), libopen-pal is
// already loaded but only visible by name.
void* lookup(const char* symbol) {
  if (void* f = dlsym(RTLD_DEFAULT, symbol)) return f;
  for (const char* lib : {"libopen-pal.so.40", "libopen-pal.so"}) {
    void* handle = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* f = dlsym(handle, symbol);
    dlclose(handle);  // NOLOAD took a reference to a library that stays loaded
    if (f) return f;
  }
  return nullptr;
}

const Hook& hook() {
  static const Hook h = [] {
    Hook found;
    const char* mode = std::getenv("CARTPLAN_PROGRESS");
    if (mode && std::strcmp(mode, "cartplan") == 0) return found;
    found.reg = reinterpret_cast<RegisterFn>(lookup("opal_progress_register"));
    found.unreg = reinterpret_cast<RegisterFn>(lookup("opal_progress_unregister"));
    if (!found.reg || !found.unreg) found = Hook{};
    return found;
  }();
  return h;
}

}  // namespace

bool progress_hook_lookup() {
  const bool found = hook().reg != nullptr;
  progress_hook_state.store(found ? 1 : 0, std::memory_order_relaxed);
  return found;
}

bool progress_hook_register(ProgressCallback cb) { return hook().reg && hook().reg(cb) == 0; }

void progress_hook_unregister(ProgressCallback cb) {
  if (hook().unreg) hook().unreg(cb);
}

void LingeringHook::want() {
  idle_rounds_ = 0;
  if (!hooked_) hooked_ = progress_hook_register(cb_);
}

void LingeringHook::idle_round(bool multiple) {
  if (multiple || !hooked_ || ++idle_rounds_ < kLingerRounds) return;  // `multiple` first: no unlocked read then
  progress_hook_unregister(cb_);  // safe inside the callback: Open MPI 4.1 shifts the array in place
  hooked_ = false;
}

}  // namespace cartplan::mpi
