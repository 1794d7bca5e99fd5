// count(): what a program costs locally (messages, bytes on the wire, bytes copied).
#include "engine/program.h"

namespace cartplan::engine {

ProgramCounts count(const Program& program) {
  ProgramCounts c;
  auto steps = [&c](const std::vector<Step>& list) {
    for (const Step& s : list) (s.combine ? c.combined_bytes : c.copied_bytes) += s.from.bytes;
  };
  for (const PhaseProgram& ph : program.phases) {
    steps(ph.before);
    steps(ph.after);
    for (const Message& m : ph.messages) {
      ++c.messages;
      (m.recv ? c.received_bytes : c.sent_bytes) += m.bytes;
      if (m.parts.size() > 1) ++c.struct_messages;
    }
  }
  steps(program.final_steps);
  return c;
}

}  // namespace cartplan::engine
