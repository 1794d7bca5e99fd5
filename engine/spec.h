// The stencil SPEC grammar of the CLI and the Info keys:
//   moore:d=D,r=R   vonneumann:d=D,r=R   box:d=D,n=N,f=F
//   chebyshev:d=D,depth=K,shadow=S   manhattan:d=D,depth=K,shadow=S   (shadow defaults to 0)
//   offsets:1,0;-1,0;0,1             @file.json
// A JSON file holds {"ndims": D, "offsets": [[...], ...]} or just [[...], ...].
//
//   Result<Neighborhood> n = parse_spec("box:d=3,n=3,f=-1");
//   if (!n) std::cerr << n.error();   // e.g. "box: unknown parameter 'x' (expected d, n, f)"
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/neighborhood.h"
#include "ir/result.h"

namespace cartplan::engine {

Result<Neighborhood> parse_spec(std::string_view spec);
Result<Neighborhood> neighborhood_from_json(const nlohmann::json& j);

}  // namespace cartplan::engine
