// End-to-end tests of the `cartplan` command-line tool: runs the real binary through /bin/sh and
// checks stdout, stderr and exit status (plan, verify, simulate, and the invalid-input corpus
// tests/corpus/cli.txt). Bazel runs tests in the workspace's runfiles root, so the binary is
// "tools/cartplan".
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/cli_run.h"

namespace {

using cartplan::tests::cli::contains;
using cartplan::tests::cli::read_file;
using cartplan::tests::cli::run;
using cartplan::tests::cli::RunResult;
using cartplan::tests::cli::temp_path;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// The integer value of the first `"key": N` in a JSON text, or -1.
long long json_int(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

std::string json_string(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": \"([^\"]*)\""))) return "";
  return m[1];
}

const std::string kBox3 = "--op alltoall --stencil box:d=3,n=3,f=-1";
const std::string kFigure2 = "--op allgather --stencil 'offsets:-2,1,1;-1,1,1;1,1,1;2,1,1'";
const std::string kMoore2 = "--stencil moore:d=2,r=1";

}  // namespace

TEST_CASE("plan json: box d=3 n=3 f=-1 combining alltoall has C = 6 rounds and V = 54") {
  const RunResult r = run("plan " + kBox3 + " --algo combining --format json");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(json_string(r.out, "schema") == "cartplan.plan/1");
  CHECK(json_string(r.out, "op") == "alltoall");
  CHECK(json_string(r.out, "algorithm") == "combining");
  CHECK(json_int(r.out, "t") == 26);
  CHECK(contains(r.out, "\"rounds\": 6,"));
  CHECK(contains(r.out, "\"volume\": 54,"));

  // json is the default format; direct is one round per non-zero offset.
  const RunResult d = run("plan " + kBox3 + " --algo direct");
  REQUIRE(d.status == 0);
  CHECK(json_string(d.out, "algorithm") == "direct");
  CHECK(contains(d.out, "\"rounds\": 26,"));
  CHECK(contains(d.out, "\"volume\": 26,"));
}

TEST_CASE("plan: the optimizer picks direct for Figure 2's allgather (C = 6 > t = 4)") {
  const RunResult r = run("plan " + kFigure2);
  REQUIRE(r.status == 0);
  CHECK(json_string(r.out, "algorithm") == "direct");
  CHECK(json_int(r.out, "combining_rounds") == 6);
  CHECK(json_int(r.out, "t") == 4);

  // Forced combining in C_k order has volume 6; natural order 12 (docs/architecture.md,
  // "Worked checks from seed 000").
  const RunResult c = run("plan " + kFigure2 + " --algo combining");
  REQUIRE(c.status == 0);
  CHECK(contains(c.out, "\"volume\": 6,"));
  const RunResult n = run("plan " + kFigure2 + " --algo combining --dim-order natural");
  REQUIRE(n.status == 0);
  CHECK(contains(n.out, "\"volume\": 12,"));
  CHECK(contains(n.out, "\"dim_order\": [0, 1, 2]"));
  const RunResult e = run("plan " + kFigure2 + " --algo combining --dim-order 2,1,0");
  REQUIRE(e.status == 0);
  CHECK(contains(e.out, "\"dim_order\": [2, 1, 0]"));
}

TEST_CASE("plan: block size and cost model change the optimizer's choice") {
  // moore d=2: C = 4 < t = 8, V = 12, so m* = alpha/beta * (8-4)/(12-8) = 2000 bytes by default.
  const RunResult small = run("plan --op alltoall " + kMoore2 + " --block-bytes 100");
  REQUIRE(small.status == 0);
  CHECK(json_string(small.out, "algorithm") == "combining");
  const RunResult big = run("plan --op alltoall " + kMoore2 + " --block-bytes 100000");
  REQUIRE(big.status == 0);
  CHECK(json_string(big.out, "algorithm") == "direct");
  // With free messages, sending fewer bytes (direct) always wins.
  const RunResult free = run("plan --op alltoall " + kMoore2 + " --alpha-us 0 --beta-us-per-byte 0.001");
  REQUIRE(free.status == 0);
  CHECK(json_string(free.out, "algorithm") == "direct");
  CHECK(contains(free.out, "\"alpha_us\": 0"));
}

TEST_CASE("plan --explain: every candidate's cost term by term, the cheapest marked") {
  const RunResult r = run("plan --op alltoall " + kMoore2 + " --block-bytes 100 --explain");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "candidates for alltoall"));
  // direct: 8 messages of 100 bytes in one phase; combining: 4 messages, 2 phases, 12 entries.
  CHECK(contains(r.out, "direct (rounds 8, phases 1, volume 8, order (0,1)): messages 8 x 1.000 = 8.000 | phases 1 x 0.500"));
  CHECK(contains(r.out, "combining (rounds 4, phases 2, volume 12, order (0,1)): messages 4 x 1.000 = 4.000 | phases 2 x"));
  CHECK(contains(r.out, "wire 1200 B x 0.000500 = 0.600"));
  CHECK(contains(r.out, "* combining"));
  CHECK(contains(r.out, "chosen: combining"));
  // Only the requested kind with --algo; --explain takes no value.
  const RunResult d = run("plan --op alltoall " + kMoore2 + " --algo direct --explain");
  REQUIRE(d.status == 0);
  CHECK_FALSE(contains(d.out, "combining ("));
  // Auto also searches every dimension order and lists the cheapest with its order.
  const RunResult o = run("plan --op allgather --stencil 'offsets:-1,0;2,2;2,-1;-2,0;2,0;-1,-1' --block-bytes 100 --explain");
  REQUIRE(o.status == 0);
  CHECK(contains(o.out, "  combining (rounds 5, phases 2, volume 8, order (1,0)): "));
  CHECK(contains(o.out, "* combining, best order (rounds 5, phases 2, volume 6, order (0,1)): "));
  CHECK(contains(o.out, "chosen: combining, best order\n"));
  const RunResult bad = run("plan --op alltoall " + kMoore2 + " --explain=yes");
  CHECK(bad.status == 2);
  CHECK(contains(bad.err, "option --explain takes no value"));
}

TEST_CASE("plan --explain --ranks-per-node: the placement counts on a grid, priced 0 by the built-in model") {
  // 16x16 torus, 16 ranks per node (a node is one row): dimension 0 always leaves the node.
  // Allgather of 4-KB blocks: combining sends 2 messages off-node in the phase of dimension 0;
  // with that phase first they carry 1 block each, last 3 (the node's 16 ranks x 2 x 4096 B).
  const std::string base = "plan --op allgather " + kMoore2 + " --block-bytes 4096 --dims 16,16 --ranks-per-node 16 --explain";
  const RunResult first = run(base + " --algo combining --dim-order 0,1");
  REQUIRE(first.status == 0);
  CHECK(contains(first.out, ", 16 ranks per node,"));
  CHECK(contains(first.out, "off-node 2 x 0.000 = 0.000 | off-node 8192 B x 0.000000 = 0.000 | node-link 131072 B x"));
  const RunResult last = run(base + " --algo combining --dim-order 1,0");
  REQUIRE(last.status == 0);
  CHECK(contains(last.out, "node-link 393216 B x"));
  // Without it (or on one node) nothing leaves a node.
  const RunResult one = run("plan --op allgather " + kMoore2 + " --block-bytes 4096 --dims 16,16 --ranks-per-node 256 --explain");
  REQUIRE(one.status == 0);
  CHECK(contains(one.out, "off-node 0 x 0.000 = 0.000 | off-node 0 B x 0.000000 = 0.000 | node-link 0 B x"));
  const RunResult no_dims = run("plan --op allgather " + kMoore2 + " --ranks-per-node 16");
  CHECK(no_dims.status == 2);
  CHECK(contains(no_dims.err, "--ranks-per-node needs --dims"));
  const RunResult zero = run("plan --op allgather " + kMoore2 + " --dims 4,4 --ranks-per-node 0");
  CHECK(zero.status == 2);
  CHECK(contains(zero.err, "--ranks-per-node"));
}

TEST_CASE("plan --explain --cyclic-nodes: cyclic placement (rank r on node r mod N) counts other rounds off-node") {
  // 8x8 torus over 4 nodes, cyclic: a rank's peers at +-1 row (r +- 8) share its node, every other
  // peer of the Moore neighbourhood is on another node: direct sends 6 of its 8 messages off-node.
  // Block placement of 16 ranks per node (two rows) sends the 6 of dimension 0 off from half the ranks.
  const std::string base = "plan --op alltoall " + kMoore2 + " --block-bytes 1000 --dims 8,8 --algo direct --explain";
  const RunResult cyclic = run(base + " --cyclic-nodes 4");
  REQUIRE(cyclic.status == 0);
  CHECK(contains(cyclic.out, ", cyclic over 4 nodes,"));
  CHECK(contains(cyclic.out, "off-node 6 x 0.000 = 0.000 | off-node 6000 B x"));
  const RunResult block = run(base + " --ranks-per-node 16");
  REQUIRE(block.status == 0);
  CHECK(contains(block.out, "off-node 3 x 0.000 = 0.000 | off-node 3000 B x"));
  const RunResult both = run(base + " --ranks-per-node 16 --cyclic-nodes 4");
  CHECK(both.status == 2);
  CHECK(contains(both.err, "--ranks-per-node and --cyclic-nodes exclude each other"));
  const RunResult one = run(base + " --cyclic-nodes 1");
  CHECK(one.status == 2);
  CHECK(contains(one.err, "--cyclic-nodes"));
  const RunResult no_dims = run("plan --op alltoall " + kMoore2 + " --cyclic-nodes 4");
  CHECK(no_dims.status == 2);
  CHECK(contains(no_dims.err, "--cyclic-nodes needs --dims"));
  const RunResult halo = run("halo plan --interior 16,16 --ghost 1 --dims 8,8 --cyclic-nodes 4 --ranks-per-node 2");
  CHECK(halo.status == 2);
  CHECK(contains(halo.err, "exclude each other"));
}

TEST_CASE("plan --explain --dims --block-sizes: priced for a grid and per-block sizes, as the MPI backend does") {
  // On a 2x1 torus the shifts along dimension 1 wrap to the process itself: direct sends 6
  // messages (not 8) and copies the 2 blocks of (0,+-1); combining sends 2 (dimension 0's).
  const std::string sizes = " --block-sizes 100,100,100,100,0,100,100,100,100";
  const RunResult r = run("plan --op alltoall " + kMoore2 + " --dims 2,1" + sizes + " --explain");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "candidates for alltoall moore:d=2,r=1 on 2,1, block sizes 100,100,100,100,0,100,100,100,100;"));
  CHECK(contains(r.out, "direct (rounds 8, phases 1, volume 8, order (0,1)): messages 6 x 1.000 = 6.000 |"));
  CHECK(contains(r.out, "copied 200 B x"));
  CHECK(contains(r.out, "combining (rounds 4, phases 2, volume 12, order (0,1)): messages 2 x 1.000 = 2.000 |"));
  // Without the grid every round is a message; the sizes change the wire bytes.
  const RunResult g = run("plan --op alltoall " + kMoore2 + " --block-sizes 1,1,1,1,0,1,1,1,1000 --explain");
  REQUIRE(g.status == 0);
  CHECK(contains(g.out, "direct (rounds 8, phases 1, volume 8, order (0,1)): messages 8 x 1.000 = 8.000 | phases 1 x 0.500 = 0.500 | wire 1007 B"));
  // simulate and lower take the sizes too: every block arrives with its own size; rank 0's
  // program on the 2x1 torus sends 6 messages of 100 bytes and copies the 2 blocks that wrap.
  const RunResult s = run("simulate --op alltoall " + kMoore2 + " --dims 2,1 --algo direct --format text" + sizes);
  REQUIRE(s.status == 0);
  CHECK(contains(s.out, "block sizes 100,100,100,100,0,100,100,100,100"));
  const RunResult l = run("lower --op alltoall " + kMoore2 + " --dims 2,1 --rank 0 --algo direct --format text" + sizes);
  REQUIRE(l.status == 0);
  CHECK(contains(l.out, "summary: 12 messages (0 of several parts), sent 600 B, received 600 B, copied 200 B"));
  // --strided: a direct message of one strided block above the eager limit is pipelined, not
  // read with a single copy (the MPI backend's pricing of a halo's subarrays).
  const std::string big = " --block-sizes 5000,5000,5000,5000,0,5000,5000,5000,5000";
  const RunResult c = run("plan --op alltoall " + kMoore2 + big + " --algo direct --explain");
  REQUIRE(c.status == 0);
  CHECK(contains(c.out, "rendezvous 8 x 2.000 = 16.000 | single-copy 40000 B x"));
  CHECK(contains(c.out, "| pipelined 0 x"));
  const RunResult st = run("plan --op alltoall " + kMoore2 + big + " --algo direct --strided --explain");
  REQUIRE(st.status == 0);
  CHECK(contains(st.out, ", strided, block sizes 5000,"));
  CHECK(contains(st.out, "rendezvous 0 x 2.000 = 0.000 | single-copy 0 B x 0.000000 = 0.000 | pipelined 8 x"));
  // The plan itself does not depend on the grid's prices unless the choice does.
  const RunResult j = run("plan --op alltoall " + kMoore2 + " --dims 2,1 --periods 1,0 --algo direct");
  REQUIRE(j.status == 0);
  CHECK(json_string(j.out, "algorithm") == "direct");
}

TEST_CASE("plan --algo hybrid: faces direct, the rest combined; verifies; --explain lists it") {
  const RunResult r = run("plan --op alltoall " + kMoore2 + " --algo hybrid --format text");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "combining"));
  const RunResult j = run("plan --op alltoall " + kMoore2 + " --algo hybrid");
  REQUIRE(j.status == 0);
  const std::string path = temp_path("hybrid.json");
  {
    std::ofstream f(path);
    f << j.out;
  }
  const RunResult v = run("verify '" + path + "'");
  CHECK(v.status == 0);
  const RunResult e = run("plan --op alltoall " + kMoore2 + " --explain");
  REQUIRE(e.status == 0);
  CHECK(contains(e.out, "  hybrid (rounds "));
  const RunResult bad = run("plan --op allreduce " + kMoore2 + " --algo hybrid");
  CHECK(bad.status == 2);
  CHECK(contains(bad.err, "hybrid plans exist for alltoall, allgather, scatter, bcast and gather only, not allreduce"));
}

TEST_CASE("plan | verify round trip exits 0") {
  for (const std::string& args : std::vector<std::string>{"plan " + kBox3, "plan " + kBox3 + " --algo combining",
                                                          "plan " + kFigure2 + " --algo combining",
                                                          "plan --op allgather " + kMoore2,
                                                          "plan --op allgather --stencil vonneumann:d=3,r=2 --algo combining"}) {
    CAPTURE(args);
    const RunResult p = run(args);
    REQUIRE(p.status == 0);
    const std::string file = temp_path("plan.json");
    write_file(file, p.out);
    const RunResult v = run("verify '" + file + "'");
    CHECK(v.status == 0);
    CHECK(v.err.empty());
    CHECK(contains(v.out, "ok: "));
    CHECK(contains(v.out, " rounds, "));
    CHECK(contains(v.out, " transfers"));
  }
  // The summary line names op, algorithm, rounds and volume.
  const RunResult p = run("plan " + kBox3 + " --algo combining");
  write_file(temp_path("box.json"), p.out);
  CHECK(run("verify '" + temp_path("box.json") + "'").out == "ok: alltoall combining, 6 rounds, 54 transfers\n");
  // "-" reads stdin.
  CHECK(run("verify - < '" + temp_path("box.json") + "'").status == 0);
}

TEST_CASE("verify: a tampered plan exits 1 with errors naming phase and round") {
  const RunResult p = run("plan --op alltoall " + kMoore2 + " --algo combining");
  REQUIRE(p.status == 0);
  // Round 0 of phase 0 delivers send[1] into recv[1]; deliver it into recv[3] instead.
  std::string json = p.out;
  const std::string from = "{\"buf\": \"recv\", \"block\": 1}";
  const std::size_t pos = json.find(from);
  REQUIRE(pos != std::string::npos);
  json.replace(pos, from.size(), "{\"buf\": \"recv\", \"block\": 3}");
  const std::string file = temp_path("tampered.json");
  write_file(file, json);

  const RunResult v = run("verify '" + file + "'");
  CHECK(v.status == 1);
  CHECK(v.out.empty());
  CHECK(contains(v.err, "cartplan verify: "));
  CHECK(contains(v.err, "phase 0"));
  CHECK(contains(v.err, "round 0"));
  // Every stderr line carries the prefix.
  std::istringstream lines(v.err);
  for (std::string line; std::getline(lines, line);) CHECK(line.rfind("cartplan verify: ", 0) == 0);
}

TEST_CASE("simulate: moore d=2 on a 4x4 mesh delivers everything") {
  const RunResult r = run("simulate --op alltoall " + kMoore2 + " --dims 4,4 --periods 0,0 --format json");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(contains(r.out, "\"ok\": true"));
  CHECK(contains(r.out, "\"errors\": []"));
  CHECK(json_int(r.out, "error_count") == 0);
  CHECK(json_int(r.out, "messages") > 0);
  CHECK(json_int(r.out, "bytes") > 0);
  CHECK(json_int(r.out, "copies") == 16);  // the zero offset, once per rank
  CHECK(json_int(r.out, "ranks") == 16);
  CHECK(contains(r.out, "\"model_time_us\": "));
  CHECK(!json_string(r.out, "algorithm").empty());
  CHECK(json_int(r.out, "rounds") > 0);
  CHECK(json_int(r.out, "volume") > 0);

  // A mesh sends less than a torus of the same size; direct on a torus sends t messages per rank.
  const RunResult torus = run("simulate --op alltoall " + kMoore2 + " --dims 4,4 --algo direct");
  REQUIRE(torus.status == 0);
  CHECK(json_int(torus.out, "messages") == 16 * 8);
  CHECK(json_int(torus.out, "bytes") == 16 * 8 * 8);
  const RunResult mesh = run("simulate --op alltoall " + kMoore2 + " --dims 4,4 --periods 0,0 --algo direct");
  REQUIRE(mesh.status == 0);
  CHECK(json_int(mesh.out, "messages") < 16 * 8);
}

TEST_CASE("simulate: every algorithm, op and boundary combination is correct") {
  for (const std::string op : {"alltoall", "allgather"})
    for (const std::string algo : {"direct", "combining"})
      for (const std::string periods : {"1,1,1", "0,0,0", "1,0,1"}) {
        const std::string args = "simulate --op " + op + " --stencil box:d=3,n=3,f=-1 --dims 3,4,2 --periods " +
                                 periods + " --algo " + algo + " --block-bytes 3";
        CAPTURE(args);
        const RunResult r = run(args);
        CHECK(r.status == 0);
        CHECK(contains(r.out, "\"ok\": true"));
        CHECK(json_string(r.out, "algorithm") == algo);
        CHECK(json_int(r.out, "ranks") == 24);
      }
}

TEST_CASE("lower: the program of one rank as a text table and as JSON") {
  const std::string ring = "lower --op alltoall --stencil box:d=1,n=3,f=-1 --dims 3 --rank 0";
  const RunResult t = run(ring + " --algo direct --format text");
  REQUIRE(t.status == 0);
  CHECK(t.err.empty());
  CHECK(contains(t.out, "program alltoall, rank 0: 1 phase, staging 0 B, 0 scratch blocks\n"));
  CHECK(contains(t.out, "\n  recv    from 1     tag 0    round 0          8 B  recv[0]\n"));
  CHECK(contains(t.out, "\n  send    to   1     tag 1    round 1          8 B  send[2]\n"));
  CHECK(contains(t.out, "\n  final   copy    send[1] -> recv[1]  (8 B)\n"));
  CHECK(contains(t.out, "summary: 4 messages (0 of several parts), sent 16 B, received 16 B, copied 8 B"));

  // JSON is the default format; --block-bytes sizes every location.
  const RunResult j = run(ring + " --algo direct --block-bytes 24");
  REQUIRE(j.status == 0);
  CHECK(json_string(j.out, "format") == "cartplan.program/2");
  CHECK(json_string(j.out, "op") == "alltoall");
  CHECK(json_int(j.out, "messages") == 4);
  CHECK(json_int(j.out, "sent_bytes") == 48);
  CHECK(json_int(j.out, "copied_bytes") == 24);
  CHECK(run(ring + " --algo direct --block-bytes 24").out == j.out);  // deterministic

  // Rooted ops need the root; a rank away from the root of a reduce only sends.
  const RunResult r = run("lower --op reduce --stencil box:d=2,n=3,f=-1 --dims 3,3 --rank 4 --root 0 --block-bytes 16 --format text");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "program reduce, rank 4: "));
  CHECK(contains(r.out, "send    to   3 "));
  CHECK(contains(r.out, "summary: 1 message (0 of several parts), sent 16 B, received 0 B"));
}

TEST_CASE("simulate --programs runs the lowered programs too") {
  const RunResult r = run("simulate --op allreduce " + kMoore2 + " --dims 4,3 --periods 1,0 --programs --format text");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "  programs: 40 messages, 320 bytes, 0 bytes copied, 320 bytes combined"));
  CHECK(contains(r.out, "  programs: ok, every recv block holds the right data"));
  const RunResult j = run("simulate --op scatter " + kMoore2 + " --dims 4,3 --root 3 --programs");
  REQUIRE(j.status == 0);
  CHECK(contains(j.out, "\"programs\": {\n    \"ok\": true,"));
  const RunResult plain = run("simulate --op scatter " + kMoore2 + " --dims 4,3 --root 3");
  REQUIRE(plain.status == 0);
  CHECK(!contains(plain.out, "programs"));
}

TEST_CASE("text and dot formats") {
  const RunResult text = run("plan --op alltoall " + kMoore2 + " --algo combining --format text");
  REQUIRE(text.status == 0);
  CHECK(!text.out.empty());
  CHECK(contains(text.out, "alltoall"));
  CHECK(contains(text.out, "combining"));
  CHECK(contains(text.out, "phase"));
  CHECK(contains(text.out, "round"));

  const RunResult dot = run("plan --op allgather " + kMoore2 + " --algo combining --format dot");
  REQUIRE(dot.status == 0);
  CHECK(contains(dot.out, "digraph"));
  CHECK(contains(dot.out, "->"));
  CHECK(contains(dot.out, "}"));

  const RunResult sim = run("simulate --op allgather " + kMoore2 + " --dims 4,4 --periods 0,1 --format text");
  REQUIRE(sim.status == 0);
  CHECK(contains(sim.out, "allgather"));
  CHECK(contains(sim.out, "16 ranks"));
  CHECK(contains(sim.out, "ok"));
  CHECK(contains(sim.out, "messages"));
}

TEST_CASE("help") {
  for (const std::string args : {"--help", "help", "-h", "plan --help", "verify --help", "simulate --help",
                                 "plan --op alltoall --help"}) {
    CAPTURE(args);
    const RunResult r = run(args);
    CHECK(r.status == 0);
    CHECK(contains(r.out, "usage:"));
    CHECK(contains(r.out, "cartplan simulate"));
    CHECK(r.err.empty());
  }
  const RunResult none = run("");
  CHECK(none.status == 2);
  CHECK(none.out.empty());
  CHECK(contains(none.err, "usage:"));
}

TEST_CASE("invalid-input corpus (tests/corpus/cli.txt)") { cartplan::tests::cli::check_corpus("tests/corpus/cli.txt", 25, true); }

TEST_CASE("reductions: allreduce on box d=3 n=3 is C = 6 rounds of one vector (schema 2)") {
  const RunResult r = run("plan --op allreduce --stencil box:d=3,n=3,f=-1 --algo combining");
  REQUIRE(r.status == 0);
  CHECK(json_string(r.out, "schema") == "cartplan.plan/2");
  CHECK(json_string(r.out, "op") == "allreduce");
  CHECK(contains(r.out, "\"rounds\": 6,"));
  CHECK(contains(r.out, "\"volume\": 6,"));
  CHECK(contains(r.out, "\"reduce\": true"));
  const RunResult d = run("plan --op allreduce --stencil box:d=3,n=3,f=-1 --algo direct");
  REQUIRE(d.status == 0);
  CHECK(contains(d.out, "\"rounds\": 26,"));
  // The optimizer takes combining: fewer rounds and fewer bytes.
  const RunResult a = run("plan --op allreduce --stencil box:d=3,n=3,f=-1 --block-bytes 80000");
  REQUIRE(a.status == 0);
  CHECK(json_string(a.out, "algorithm") == "combining");
  const RunResult text = run("plan --op reduce_scatter --stencil box:d=2,n=3,f=-1 --algo combining --format text");
  REQUIRE(text.status == 0);
  CHECK(contains(text.out, "+> "));
}

TEST_CASE("reductions and rooted ops: plan | verify, and simulate on tori and meshes") {
  for (const std::string op : {"allreduce", "reduce_scatter", "bcast", "gather", "scatter", "reduce"}) {
    for (const std::string algo : {"direct", "combining"}) {
      const std::string stencil = " --stencil 'offsets:1,0;0,0;1,0;-2,1;0,-1'";
      const RunResult p = run("plan --op " + op + stencil + " --algo " + algo);
      CAPTURE(op);
      CAPTURE(algo);
      REQUIRE(p.status == 0);
      const std::string file = temp_path("red.json");
      write_file(file, p.out);
      const RunResult v = run("verify '" + file + "'");
      CHECK(v.status == 0);
      CHECK(contains(v.out, "ok: " + op + " " + algo));
      const bool rooted = op == "bcast" || op == "gather" || op == "scatter" || op == "reduce";
      for (const std::string periods : {"1,1", "0,0", "0,1"}) {
        const RunResult s = run("simulate --op " + op + stencil + " --algo " + algo + " --dims 3,4 --periods " +
                                periods + (rooted ? " --root 5" : "") + " --block-bytes 16");
        CHECK(s.status == 0);
        CHECK(contains(s.out, "\"ok\": true"));
        if (rooted) CHECK(json_int(s.out, "root") == 5);
      }
    }
  }
  const RunResult dbl = run("simulate --op allreduce --stencil moore:d=3,r=1 --dims 3,3,2 --periods 1,0,1 --values double --format text");
  CHECK(dbl.status == 0);
  CHECK(contains(dbl.out, "ok"));
}

TEST_CASE("--cost-model /dev/zero exits 2 with a message instead of reading until memory runs out") {
  const RunResult r = run("plan --op alltoall --stencil moore:d=2,r=1 --cost-model /dev/zero");
  CHECK(r.status == 2);
  CHECK(contains(r.err, "--cost-model: cannot read '/dev/zero': larger than"));
  CHECK(r.out.empty());
}
