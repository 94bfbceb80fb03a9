// Finished rows: journal entries {"problem": i, "rows": [row JSON]} in, grid-ordered rows out.
#include "orchestrate/finished_rows.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

namespace {

// Why the rows of a journal entry are not those of `problem` under `strategies` ("" when they are).
std::string rows_fault(const nlohmann::json& entry, const Problem& problem, const std::vector<std::string>& strategies,
                       const std::string& origin, std::size_t index, std::vector<ResultRow>* rows) {
  auto it = entry.find("rows");
  if (it == entry.end() || !it->is_array()) return "it has no rows";
  try {
    for (std::size_t i = 0; i < it->size(); ++i)
      rows->push_back(result_row_from_json((*it)[i], origin, fmt::format("problem {} rows[{}].", index, i)));
  } catch (const UsageError& e) {
    return e.what();
  }
  std::set<std::string> seen;
  for (const ResultRow& r : *rows) {
    if (!(r.problem == problem)) return fmt::format("it holds a row of another problem ({})", r.problem.label());
    if (std::find(strategies.begin(), strategies.end(), r.strategy) == strategies.end())
      return fmt::format("it holds a row of strategy {}, which this run does not run", quoted_excerpt(r.strategy));
    if (!seen.insert(r.strategy).second) return fmt::format("it holds strategy {}'s row twice", r.strategy);
  }
  if (rows->size() != strategies.size())
    return fmt::format("it holds {} row(s) where this run has {} strategies", rows->size(), strategies.size());
  return "";
}

}  // namespace

FinishedRows::FinishedRows(const std::vector<Problem>& grid, GridJournal& journal, const std::vector<std::string>& strategies)
    : grid_(grid), journal_(journal) {
  const std::map<std::size_t, nlohmann::json> resumed = journal.resumed();  // a copy: drop() changes it
  for (const auto& [problem, entry] : resumed) {
    std::vector<ResultRow> rows;
    std::string why = rows_fault(entry, grid_[problem], strategies, quoted_path(journal.path()), problem, &rows);
    if (why.empty()) rows_[problem] = std::move(rows);
    else journal.drop(problem, why);
  }
  resumed_ = rows_.size();
}

void FinishedRows::add(std::size_t problem, const std::vector<ResultRow>& rows) {
  rows_[problem] = rows;
  nlohmann::json list = nlohmann::json::array();
  for (const ResultRow& r : rows) list.push_back(to_json(r));
  journal_.record(problem, {{"rows", std::move(list)}});
}

void FinishedRows::add_unindexed(const std::vector<ResultRow>& rows) {
  std::map<std::size_t, std::vector<ResultRow>> fresh;
  for (const ResultRow& r : rows)
    for (std::size_t i = 0; i < grid_.size(); ++i)
      if (grid_[i] == r.problem) {
        fresh[i].push_back(r);
        break;
      }
  for (auto& [problem, list] : fresh) {
    std::vector<ResultRow>& held = rows_[problem];
    // The problem whose first strategies ran here and the rest in the fresh process gets both.
    for (ResultRow& r : list) {
      bool dup = false;
      for (const ResultRow& h : held) dup = dup || h.strategy == r.strategy;
      if (!dup) held.push_back(std::move(r));
    }
  }
}

std::vector<ResultRow> FinishedRows::in_grid_order() const {
  std::vector<ResultRow> out;
  for (const auto& [problem, rows] : rows_) out.insert(out.end(), rows.begin(), rows.end());
  return out;
}

}  // namespace ab
