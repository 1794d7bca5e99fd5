// `cartplan halo ...`: planning, explaining, verifying and simulating halo exchanges from an
// array description (docs/halo.md, docs/cli.md), without MPI.
//
//   cartplan halo plan     --interior 64,64 --ghost 2 --elem 8 --stencil moore:d=2,r=1 --dims 4,4 > p.json
//   cartplan halo explain  --interior 32,32,32 --ghost 1 --dims 4,4,4 --periods 0,0,0
//   cartplan halo verify   p.json
//   cartplan halo simulate --interior 6,5 --ghost-lo 1,2 --ghost-hi 2,0 --order F --dims 3,4 --algo split
//   cartplan halo rank     --interior 64,64 --ghost 2 --dims 4,4 --rank 5
//
// Exit status as for every cartplan command: 0 success, 1 the plan or simulation is wrong,
// 2 bad input (a message "cartplan: halo ...: ..." on stderr).
#pragma once

#include <string>
#include <vector>

namespace cartplan::tools {

// args: everything after "halo". Writes to stdout/stderr; returns the exit status.
int run_halo_command(const std::vector<std::string>& args);

}  // namespace cartplan::tools
