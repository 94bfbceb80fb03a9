// The rows of a run's finished problems, by grid index: those a resumed journal holds and those this process
// finished (each written to the journal as it finishes), put back into grid order for the report.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "orchestrate/grid_journal.hpp"
#include "core/problem.hpp"
#include "run/result_row.hpp"

namespace ab {

class FinishedRows {
 public:
  // Reads the rows of the problems `journal` resumed. An entry that is not exactly one row of the problem
  // per name in `strategies` (a malformed row, another problem's row, an unknown or repeated strategy, a
  // missing one) is dropped from the journal (said on stderr) and its problem runs again.
  FinishedRows(const std::vector<Problem>& grid, GridJournal& journal, const std::vector<std::string>& strategies);
  // A problem finished by this process: kept and journaled.
  void add(std::size_t problem, const std::vector<ResultRow>& rows);
  // Rows without a grid index (after a lost device context: this process's rows of the problem it handed
  // off, then the fresh process's): placed at their problem's grid index, a strategy a problem already
  // holds dropped. Not journaled (the fresh process is not).
  void add_unindexed(const std::vector<ResultRow>& rows);
  std::vector<ResultRow> in_grid_order() const;
  std::size_t problems() const { return rows_.size(); }
  std::size_t resumed() const { return resumed_; }

 private:
  const std::vector<Problem>& grid_;
  GridJournal& journal_;
  std::map<std::size_t, std::vector<ResultRow>> rows_;
  std::size_t resumed_ = 0;
};

}  // namespace ab
