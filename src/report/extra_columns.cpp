// Host time, configuration, launch and verification columns of a row (report/extra_columns.hpp).
#include "report/extra_columns.hpp"

#include <cmath>

#include "core/dtype.hpp"
#include "report/cells.hpp"

namespace ab {

namespace {

std::string flag(const std::optional<bool>& b) { return b ? (*b ? "true" : "false") : ""; }

// "shape=algo (source); ..." for every GEMM plan of the row.
std::string gemm_algos(const RowConfig& c) {
  std::string s;
  for (const GemmPlanChoice& g : c.gemm_algos)
    s += (s.empty() ? "" : "; ") + g.shape + "=" + g.algo + (g.source.empty() ? "" : " (" + g.source + ")");
  return s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

}  // namespace

std::vector<std::string> extra_column_names() {
  return {"host_median_ms", "round_error",    "tolerance",       "max_abs_err",  "tile",
          "tile_source",    "config_source",  "score_dtype",     "gathered_pages", "gqa_packed",
          "padded_fraction", "gemm_algos",    "launch_formula",  "launch_source", "kernel_names",
          "injected_slowdown"};
}

std::vector<std::string> extra_column_cells(const ResultRow& r) {
  const RowConfig* c = r.config ? &*r.config : nullptr;
  const MeasuredLaunches* m = r.launches.measured ? &*r.launches.measured : nullptr;
  std::vector<std::string> cells = {
      csv_num(r.timing ? r.timing->host_ms.median : NAN),
      csv_num(r.timing && r.timing->rounds ? r.timing->rounds->error : NAN),
      csv_num(r.verify ? r.verify->tolerance : NAN),
      csv_num(r.verify ? r.verify->max_abs_err : NAN),
      c && c->strategy.tile ? c->strategy.tile->name() : "",
      c ? c->strategy.tile_source : "",
      c ? c->source : "",
      c && c->strategy.score_dtype ? dtype_name(*c->strategy.score_dtype) : "",
      c ? flag(c->strategy.gathered_pages) : "",
      c ? flag(c->strategy.gqa_packed) : "",
      csv_num(c && c->strategy.padded_fraction ? *c->strategy.padded_fraction : NAN),
      c ? gemm_algos(*c) : "",
      r.launches.has_contract ? r.launches.formula : "",
      m ? m->source : "",
      m ? joined(m->kernel_names) : "",
      csv_num(r.injected_slowdown ? r.injected_slowdown->achieved : NAN)};
  return cells;
}

}  // namespace ab
