// lower(): programs for known cases (messages, copied bytes, staging) and layout errors.
#include "engine/lower.h"

#include <doctest/doctest.h>

#include "engine/bind.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
