// Text and JSON printers of a Program.
#include "engine/program_print.h"

#include <iomanip>
#include <sstream>

namespace cartplan::engine {
namespace {

const char* kind_name(Loc::Kind kind) {
  switch (kind) {
    case Loc::Kind::kSend: return "send";
    case Loc::Kind::kRecv: return "recv";
    case Loc::Kind::kStaging: return "stage";
    case Loc::Kind::kScratch: return "scratch";
  }
  return "?";
}

std::string step_text(const Step& s) {
  return std::string(s.combine ? "combine " : "copy    ") + to_string(s.from) + " -> " + to_string(s.to) + "  (" +
         std::to_string(s.from.bytes) + " B)";
}

void steps_text(std::ostringstream& out, const char* label, const std::vector<Step>& steps) {
  for (const Step& s : steps) out << "  " << std::left << std::setw(8) << label << step_text(s) << "\n";
}

nlohmann::json loc_json(const Loc& l) {
  nlohmann::json j;
  j["kind"] = kind_name(l.kind);
  if (l.kind == Loc::Kind::kStaging)
    j["offset"] = l.offset;
  else
    j["index"] = l.index;
  j["bytes"] = l.bytes;
  j["contiguous"] = l.contiguous;
  return j;
}

nlohmann::json steps_json(const std::vector<Step>& steps) {
  nlohmann::json list = nlohmann::json::array();
  for (const Step& s : steps) list.push_back({{"from", loc_json(s.from)}, {"to", loc_json(s.to)}, {"combine", s.combine}});
  return list;
}

}  // namespace

std::string to_string(const Loc& loc) {
  std::string s = kind_name(loc.kind);
  if (loc.kind == Loc::Kind::kStaging)
    s += "[" + std::to_string(loc.offset) + "+" + std::to_string(loc.bytes) + "]";
  else
    s += "[" + std::to_string(loc.index) + "]";
  if (!loc.contiguous) s += "~";
  return s;
}

std::string to_text(const Program& program) {
  std::ostringstream out;
  out << "program " << ir::to_string(program.op) << ", rank " << program.rank << ": " << program.phases.size()
      << (program.phases.size() == 1 ? " phase" : " phases") << ", staging " << program.staging_bytes << " B, "
      << program.scratch_bytes.size() << " scratch blocks\n";
  for (std::size_t p = 0; p < program.phases.size(); ++p) {
    const PhaseProgram& ph = program.phases[p];
    out << "phase " << p << "\n";
    steps_text(out, "before", ph.before);
    for (const Message& m : ph.messages) {
      out << "  " << std::left << std::setw(8) << (m.recv ? "recv" : "send") << (m.recv ? "from " : "to   ")
          << std::setw(5) << m.peer << " tag " << std::setw(4) << m.tag << " round " << std::setw(4) << m.round
          << std::right << std::setw(8) << m.bytes << " B ";
      for (std::size_t i = 0; i < m.parts.size(); ++i)
        out << (m.trailer && i + 1 == m.parts.size() ? " trailer:" : " ") << to_string(m.parts[i]);
      out << "\n";
    }
    steps_text(out, "after", ph.after);
  }
  if (!program.final_steps.empty()) {
    out << "final\n";
    steps_text(out, "final", program.final_steps);
  }
  const ProgramCounts c = count(program);
  out << "summary: " << c.messages << (c.messages == 1 ? " message (" : " messages (") << c.struct_messages << " of several parts), sent " << c.sent_bytes
      << " B, received " << c.received_bytes << " B, copied " << c.copied_bytes << " B, combined " << c.combined_bytes
      << " B, staging " << program.staging_bytes << " B\n";
  return out.str();
}

nlohmann::json to_json(const Program& program) {
  nlohmann::json j;
  j["format"] = "cartplan.program/2";
  j["op"] = ir::to_string(program.op);
  j["rank"] = program.rank;
  j["staging_bytes"] = program.staging_bytes;
  j["scratch_bytes"] = program.scratch_bytes;
  nlohmann::json phases = nlohmann::json::array();
  for (std::size_t p = 0; p < program.phases.size(); ++p) {
    const PhaseProgram& ph = program.phases[p];
    nlohmann::json messages = nlohmann::json::array();
    for (const Message& m : ph.messages) {
      nlohmann::json parts = nlohmann::json::array();
      for (const Loc& l : m.parts) parts.push_back(loc_json(l));
      messages.push_back({{"direction", m.recv ? "recv" : "send"},
                          {"peer", m.peer},
                          {"tag", m.tag},
                          {"phase", m.phase},
                          {"round", m.round},
                          {"bytes", m.bytes},
                          {"parts", parts},
                          {"trailer", m.trailer}});
    }
    phases.push_back({{"phase", p}, {"before", steps_json(ph.before)}, {"messages", messages}, {"after", steps_json(ph.after)}});
  }
  j["phases"] = phases;
  j["final_steps"] = steps_json(program.final_steps);
  const ProgramCounts c = count(program);
  j["counts"] = {{"messages", c.messages},
                 {"sent_bytes", c.sent_bytes},
                 {"received_bytes", c.received_bytes},
                 {"copied_bytes", c.copied_bytes},
                 {"combined_bytes", c.combined_bytes},
                 {"struct_messages", c.struct_messages}};
  return j;
}

std::string program_without_names(const std::string& program_json) {
  nlohmann::json j = nlohmann::json::parse(program_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "";
  // Tags and rounds sit only in the messages of the phases (to_json above).
  if (j.contains("phases") && j["phases"].is_array())
    for (nlohmann::json& phase : j["phases"])
      if (phase.is_object() && phase.contains("messages") && phase["messages"].is_array())
        for (nlohmann::json& m : phase["messages"])
          if (m.is_object()) {
            m.erase("tag");
            m.erase("round");
          }
  return j.dump();
}

}  // namespace cartplan::engine
