// Finished rows: journal entries {"problem": i, "rows": [row JSON]} in, grid-ordered rows out.
#include "cli/finished_rows.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

FinishedRows::FinishedRows(const std::vector<Problem>& grid, GridJournal& journal) : grid_(grid), journal_(journal) {
  for (const auto& [problem, entry] : journal.resumed()) {
    const std::string origin = fmt::format("'{}'", journal.path());
    auto it = entry.find("rows");
    if (it == entry.end() || !it->is_array())
      throw UsageError(fmt::format("{}: the entry of problem {} has no rows", origin, problem));
    std::vector<ResultRow>& rows = rows_[problem];
    for (std::size_t i = 0; i < it->size(); ++i)
      rows.push_back(result_row_from_json((*it)[i], origin, fmt::format("problem {} rows[{}].", problem, i)));
    for (const ResultRow& r : rows)
      if (!(r.problem == grid_[problem]))
        throw UsageError(fmt::format("{}: problem {} holds rows of another problem ({})", origin, problem, r.problem.label()));
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
