// kill_other_ranks (smpi_kill.h), SMPI build only. Compiled as C++17: SimGrid 3.32's
// <simgrid/s4u/Actor.hpp> uses std::result_of_t, which C++20 removed.
#include "backends/mpi/smpi_kill.h"

#include <simgrid/s4u/Actor.hpp>

namespace cartplan::mpi {

void kill_other_ranks() { simgrid::s4u::Actor::kill_all(); }

}  // namespace cartplan::mpi
