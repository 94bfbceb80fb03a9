// Shards (issue 17): --shard parsing, the cost-balanced partition (every problem in exactly one shard,
// deterministic, balanced), the Slurm and Kubernetes environment defaults, and the journal file (whole
// lines, a torn last line dropped, a header from another run refused).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

#include "orchestrate/finished_rows.hpp"
#include "orchestrate/grid_journal.hpp"
#include "orchestrate/shard_choice.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/journal_file.hpp"
#include "core/shard.hpp"
#include "run/result_row.hpp"
#include "testing.hpp"

using namespace ab;
using attnbench_testing::usage_error_of;

namespace {

// A random grid of awkward shapes: odd lengths, B=1, H=1, one KV head, q_len=1, causal, both dtypes.
std::vector<Problem> random_grid(unsigned seed, int n) {
  std::mt19937 rng(seed);
  std::vector<Problem> out;
  for (int i = 0; i < n; ++i) {
    GridSpec g;
    std::int64_t heads = std::vector<std::int64_t>{1, 2, 4, 12}[rng() % 4];
    g.set("batch", std::to_string(1 + rng() % 9));
    g.set("heads", std::to_string(heads));
    g.set("kv_heads", std::to_string(rng() % 2 ? heads : 1));
    g.set("seq_len", std::to_string(3 + rng() % 3000));
    g.set("head_dim", std::to_string(std::vector<int>{8, 64, 128}[rng() % 3]));
    g.set("pages", std::to_string(1 + rng() % 3));
    g.set("causal", rng() % 2 ? "true" : "false");
    g.set("dtype", rng() % 2 ? "fp16" : "bf16");
    for (Problem& p : expand_grid(g)) out.push_back(p);
  }
  return out;
}

EnvReader env_of(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}


}  // namespace

TEST(Shard, parses_index_over_count) {
  Shard s = parse_shard("3/7");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 7);
  EXPECT_EQ(s.text(), "3/7");
  EXPECT_TRUE(parse_shard("0/1").whole());
  for (const char* bad : {"", "4/4", "5/4", "-1/4", "1/0", "0/0", "1", "1/", "/4", "a/4", "1/4/2", " 1/4", "1/4 ",
                          "1.0/4", "0/100001"}) {
    std::string why = usage_error_of([&] { parse_shard(bad); });
    EXPECT_FALSE(why.empty()) << bad;
    EXPECT_NE(why.find("--shard"), std::string::npos) << why;
  }
}

TEST(Shard, partition_covers_the_grid_once_and_is_deterministic) {
  for (unsigned seed : {1u, 2u, 3u}) {
    std::vector<Problem> grid = random_grid(seed, 37);
    for (int n : {1, 2, 3, 4, 7, 37, 50}) {
      std::vector<int> owner(grid.size(), -1);
      for (int i = 0; i < n; ++i) {
        std::vector<std::size_t> mine = shard_problems(grid, Shard{i, n});
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
        EXPECT_EQ(mine, shard_problems(grid, Shard{i, n}));  // the same on every call (and every machine)
        for (std::size_t pi : mine) {
          ASSERT_LT(pi, grid.size());
          EXPECT_EQ(owner[pi], -1) << "problem " << pi << " in two shards of " << n;
          owner[pi] = i;
        }
      }
      EXPECT_TRUE(std::count(owner.begin(), owner.end(), -1) == 0) << "a problem in no shard of " << n;
    }
  }
}

TEST(Shard, partition_balances_estimated_cost) {
  std::vector<Problem> grid = random_grid(9, 60);
  double biggest = 0;
  for (const Problem& p : grid) biggest = std::max(biggest, estimated_cost(p));
  for (int n : {2, 3, 5, 8}) {
    std::vector<double> load(n, 0.0);
    for (int i = 0; i < n; ++i)
      for (std::size_t pi : shard_problems(grid, Shard{i, n})) load[i] += estimated_cost(grid[pi]);
    double hi = *std::max_element(load.begin(), load.end()), lo = *std::min_element(load.begin(), load.end());
    EXPECT_LE(hi - lo, biggest * (1 + 1e-12)) << n << " shards";
  }
  // By cost, not by count: one costly problem and many cheap ones give the costly one a shard to itself.
  GridSpec big, small;
  big.set("batch", "32").set("heads", "32").set("seq_len", "4096").set("head_dim", "128");
  small.set("batch", "1").set("heads", "1").set("seq_len", "16:4096:*2").set("head_dim", "8");
  std::vector<Problem> skewed = expand_grid(small);
  skewed.push_back(expand_grid(big).front());
  std::vector<std::size_t> first = shard_problems(skewed, Shard{0, 2});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first.front(), skewed.size() - 1);
  EXPECT_GT(estimated_cost(skewed.back()), estimated_cost(skewed.front()));
}

TEST(Shard, environment_defaults) {
  std::string source;
  // Nothing set: the whole grid.
  EXPECT_TRUE(choose_shard("", env_of({}), &source).whole());
  // Slurm arrays: the task's offset from the array's first index.
  Shard s = choose_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "6"}, {"SLURM_ARRAY_TASK_MIN", "5"},
                                     {"SLURM_ARRAY_TASK_COUNT", "4"}}), &source);
  EXPECT_EQ(s.text(), "1/4");
  EXPECT_EQ(source, "SLURM_ARRAY_TASK_ID");
  EXPECT_EQ(choose_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})).text(), "3/4");
  // Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX with ATTNBENCH_SHARD_COUNT.
  s = choose_shard("", env_of({{"JOB_COMPLETION_INDEX", "2"}, {"ATTNBENCH_SHARD_COUNT", "3"}}), &source);
  EXPECT_EQ(s.text(), "2/3");
  EXPECT_EQ(source, "JOB_COMPLETION_INDEX");
  // The flag wins over the environment.
  EXPECT_EQ(choose_shard("0/2", env_of({{"JOB_COMPLETION_INDEX", "2"}, {"ATTNBENCH_SHARD_COUNT", "3"}}), &source).text(), "0/2");
  EXPECT_EQ(source, "--shard");
  // Bad environments: one line naming the variable.
  struct Bad {
    std::map<std::string, std::string> env;
    const char* needle;
  };
  for (const Bad& b : std::vector<Bad>{
           {{{"JOB_COMPLETION_INDEX", "1"}}, "ATTNBENCH_SHARD_COUNT is not"},
           {{{"JOB_COMPLETION_INDEX", "3"}, {"ATTNBENCH_SHARD_COUNT", "3"}}, "out of range"},
           {{{"JOB_COMPLETION_INDEX", "x"}, {"ATTNBENCH_SHARD_COUNT", "3"}}, "JOB_COMPLETION_INDEX='x'"},
           {{{"JOB_COMPLETION_INDEX", "0"}, {"ATTNBENCH_SHARD_COUNT", "0"}}, "between 1 and"},
           {{{"SLURM_ARRAY_TASK_ID", "1"}}, "SLURM_ARRAY_TASK_COUNT is not"},
           {{{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, "out of range"},
           {{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "2"}, {"SLURM_ARRAY_TASK_STEP", "2"}}, "consecutively"},
       }) {
    std::string why = usage_error_of([&] { choose_shard("", env_of(b.env)); });
    EXPECT_NE(why.find(b.needle), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

TEST(Journal, lines_survive_and_a_torn_tail_is_dropped) {
  const std::string path = "test_shard_journal.jsonl";
  std::remove(path.c_str());
  {
    JournalWriter w(path, {{"command", "run"}, {"grid", 3}}, true);
    w.append({{"problem", 0}});
    w.append({{"problem", 2}});
  }
  {
    std::ofstream f(path, std::ios::app);
    f << "{\"problem\": 1, \"rows\": [";  // a write cut short by SIGKILL
  }
  JournalContents c = read_journal(path);
  EXPECT_TRUE(c.torn_tail);
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.entries[1].value["problem"], 2);
  EXPECT_TRUE(c.entries[1].fault.empty()) << c.entries[1].fault;
  EXPECT_EQ(c.header["command"], "run");
  EXPECT_EQ(c.header["run_id"].get<std::string>().size(), 16u);
  // Appending again cuts the torn line off first.
  {
    JournalWriter w(path, c.header, false);
    w.append({{"problem", 1}});
  }
  c = read_journal(path);
  EXPECT_FALSE(c.torn_tail);
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.entries[2].value["problem"], 1);
  // Another run's header is refused, naming the field.
  std::string why = usage_error_of([&] { check_journal_header(path, c.header, {{"command", "tune"}, {"grid", 3}}); });
  EXPECT_NE(why.find("command differs (was run, now tune)"), std::string::npos) << why;
  EXPECT_TRUE(usage_error_of([&] { check_journal_header(path, c.header, {{"command", "run"}, {"grid", 3}}); }).empty());
  // Lines are checked, not trusted: not JSON, edited after it was written, no checksum, too deep.
  {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string edited = text.substr(text.find('\n') + 1);
    edited = edited.substr(0, edited.find('\n'));
    edited.replace(edited.find("\"problem\":0"), 11, "\"problem\":7");
    std::ofstream f(path, std::ios::app);
    f << "not json\n" << edited << "\n{\"problem\": 0}\n" << std::string(100, '[') << std::string(100, ']') << "\n";
  }
  c = read_journal(path);
  ASSERT_EQ(c.entries.size(), 7u);
  EXPECT_EQ(c.entries[3].line, 5u);
  EXPECT_NE(c.entries[3].fault.find("not JSON"), std::string::npos) << c.entries[3].fault;
  EXPECT_NE(c.entries[4].fault.find("checksum does not match"), std::string::npos) << c.entries[4].fault;
  EXPECT_NE(c.entries[5].fault.find("no checksum"), std::string::npos) << c.entries[5].fault;
  EXPECT_NE(c.entries[6].fault.find("nested more than"), std::string::npos) << c.entries[6].fault;
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(c.entries[i].fault.empty()) << i;
  std::remove(path.c_str());
}

TEST(Journal, is_written_only_as_a_file_of_its_own_and_by_one_process) {
  const std::string path = "test_journal_own.jsonl", victim = "test_journal_victim.txt";
  std::remove(path.c_str());
  { std::ofstream(victim) << "precious\n"; }
  // A planted link is refused, and the file it points to is untouched.
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  std::string why = usage_error_of([&] { JournalWriter w(path, {{"command", "run"}}, true); });
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_NE(usage_error_of([&] { read_journal(path); }).find("symbolic link"), std::string::npos);
  std::remove(path.c_str());
  // A file that is not a journal is not replaced.
  { std::ofstream(path) << "precious\n"; }
  why = usage_error_of([&] { JournalWriter w(path, {{"command", "run"}}, true); });
  EXPECT_NE(why.find("not an attnbench journal"), std::string::npos) << why;
  // A read-only journal is refused.
  std::remove(path.c_str());
  { JournalWriter w(path, {{"command", "run"}}, true); }
  ::chmod(path.c_str(), 0444);
  why = usage_error_of([&] { JournalWriter w(path, {{"command", "run"}}, true); });
  EXPECT_NE(why.find("read-only"), std::string::npos) << why;
  ::chmod(path.c_str(), 0644);
  // While one writer holds the journal, a second (fresh or continuing) is refused.
  {
    JournalWriter held(path, {{"command", "run"}}, true);
    why = usage_error_of([&] { JournalWriter w(path, {{"command", "run"}}, true); });
    EXPECT_NE(why.find("another attnbench process is writing it"), std::string::npos) << why;
    why = usage_error_of([&] { JournalWriter w(path, read_journal(path).header, false); });
    EXPECT_NE(why.find("another attnbench process is writing it"), std::string::npos) << why;
  }
  EXPECT_TRUE(usage_error_of([&] { JournalWriter w(path, {{"command", "run"}}, true); }).empty());
  std::ifstream in(victim);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "precious");
  std::remove(path.c_str());
  std::remove(victim.c_str());
}

// --resume takes an entry only when it holds exactly one row of its problem per strategy of the run: entries
// with valid checksums but an unknown, repeated or missing strategy, or another problem's row, are dropped and
// their problems run again; a problem journaled twice keeps its last line.
TEST(Journal, resumed_rows_are_one_per_strategy_of_their_problem) {
  const std::string path = "test_resumed_rows.journal";
  std::remove(path.c_str());
  std::vector<Problem> grid;
  for (std::int64_t s : {9, 21, 37, 50, 64, 80})
    grid.push_back(make_problem(1, 2, s, 16, 1, 0, KvLayout::contiguous, DType::fp16, false));
  const std::vector<std::string> strategies = {"fused", "head_batched"};
  auto row = [&](std::size_t problem, const std::string& strategy) {
    ResultRow r;
    r.problem = grid[problem];
    r.strategy = strategy;
    r.disposition = Disposition::unsupported;
    r.reason = "a test row";
    return to_json(r);
  };
  auto entry = [](std::vector<nlohmann::json> rows) { return nlohmann::json{{"rows", rows}}; };
  const nlohmann::json header = {{"command", "run"}, {"grid", grid_fingerprint(grid)}};
  {
    JournalWriter w(path, header, true);
    auto put = [&](std::size_t p, nlohmann::json e) {
      e["problem"] = p;
      w.append(e);
    };
    put(0, entry({row(0, "fused"), row(0, "head_batched")}));  // good
    put(1, entry({row(1, "fused"), row(1, "bogus")}));         // a strategy the run does not run
    put(2, entry({row(2, "fused")}));                          // a row missing
    put(3, entry({row(3, "fused"), row(3, "fused")}));         // a strategy twice
    put(4, entry({row(4, "fused"), row(0, "head_batched")}));  // another problem's row
    put(5, entry({row(5, "fused")}));                          // first line of problem 5: missing a row...
    put(5, entry({row(5, "fused"), row(5, "head_batched")}));  // ...its last line is good and kept
  }
  {
    std::vector<std::size_t> all = {0, 1, 2, 3, 4, 5};
    GridJournal journal(path, header, /*resume=*/true, /*quiet=*/true, all);
    FinishedRows done(grid, journal, strategies);
    EXPECT_TRUE(journal.done(0));
    EXPECT_TRUE(journal.done(5));
    for (std::size_t p : {1, 2, 3, 4}) EXPECT_FALSE(journal.done(p)) << p;
    EXPECT_EQ(done.resumed(), 2u);
    EXPECT_EQ(journal.dropped(), 5u);  // problem 5's first line, and problems 1 to 4
    EXPECT_EQ(done.in_grid_order().size(), 4u);
  }
  // A shard's journal takes no line of a problem outside the shard.
  GridJournal shard_journal(path, header, true, true, {0, 1, 2});
  EXPECT_TRUE(shard_journal.done(0));
  EXPECT_FALSE(shard_journal.done(5));
  std::remove(path.c_str());
}
