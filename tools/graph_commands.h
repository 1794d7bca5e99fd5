// `cartplan graph ...`: planning, explaining, verifying and simulating neighbourhood collectives
// on general distributed graphs (docs/graphs.md, docs/cli.md), without MPI.
//
//   cartplan graph plan     --graph moore:dims=16x16,r=2 --op allgather > plan.json
//   cartplan graph explain  --graph random:p=256,q=0.05 --op allgather --block-bytes 4
//   cartplan graph verify   plan.json
//   cartplan graph simulate --graph osu:p=64,d=2,r=1 --op alltoall --vary 3
//   cartplan graph rank     --graph mesh:cells=64x64,parts=16 --op alltoall --rank 5
//
// Exit status as for every cartplan command: 0 success, 1 the plan or simulation is wrong,
// 2 bad input (a message "cartplan: ..." on stderr).
#pragma once

#include <string>
#include <vector>

namespace cartplan::tools {

// args: everything after "graph". Writes to stdout/stderr; returns the exit status.
int run_graph_command(const std::vector<std::string>& args);

}  // namespace cartplan::tools
