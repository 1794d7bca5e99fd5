// Printers of a Program (engine/program.h): a readable per-phase table for people and a
// deterministic JSON value ("format": "cartplan.program/2") for tools and tests.
//
// Locations print as send[3], recv[0], scratch[2] and stage[128+64] (64 bytes at offset 128 of
// the staging arena); a location whose bytes are not adjacent in memory (a datatype) gets a
// trailing "~"; a message's trailer (engine::Message::trailer) prints as trailer:stage[..], and
// in JSON every message says "trailer": true or false (new in cartplan.program/2). The text
// ends with a summary line of engine::count(program).
//
//   Result<Program> p = engine::lower(plan, bound, engine::contiguous_layout(plan, bound));
//   std::cout << engine::to_text(*p);
//   std::cout << engine::to_json(*p).dump(2) << "\n";
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/program.h"

namespace cartplan::engine {

// "send[3]", "recv[0]", "scratch[2]", "stage[128+64]" ("~" appended if not contiguous).
std::string to_string(const Loc& loc);

// One block per phase: its `before` steps, its messages (receives, then sends; peer, tag,
// round, bytes, parts) and its `after` steps; then the final steps and the summary line.
std::string to_text(const Program& program);

// Keys: format, op, rank, staging_bytes, scratch_bytes, phases (each: phase, before,
// messages, after), final_steps, counts (engine::count). Locations are objects with kind,
// index (blocks), offset (staging), bytes and contiguous. Objects print with sorted keys, so
// equal programs print equal text.
nlohmann::json to_json(const Program& program);

// The text of to_json() without what only names a message: its tag and its round. Two
// programs whose texts are equal this way post the same messages with the same parts, copy the
// same bytes and wait for the same phases, so two requests running them are one choice timed
// twice (the A/A pairs of bench/exchange_bench and tools/halo). Takes any program JSON text (Cart_request_program,
// `cartplan lower --format json`); returns "" when the text is not a JSON object.
//
//   if (engine::program_without_names(a) == engine::program_without_names(b)) ...
std::string program_without_names(const std::string& program_json);

}  // namespace cartplan::engine
