// Cell formatting for the report printers and the compare output.
#include "report/cells.hpp"

#include <cmath>

#include <fmt/format.h>

namespace ab {

static bool missing(double v) { return !std::isfinite(v); }

std::string cell_ms(double ms) {
  if (missing(ms)) return "-";
  double a = std::fabs(ms);
  if (a < 1) return fmt::format("{:.4f}", ms);
  if (a < 100) return fmt::format("{:.3f}", ms);
  return fmt::format("{:.1f}", ms);
}

std::string cell_pct(double f) {
  if (missing(f)) return "-";
  double p = f * 100;
  return std::fabs(p) < 1 ? fmt::format("{:.2f}%", p) : fmt::format("{:.1f}%", p);
}

std::string cell_signed_pct(double f) {
  if (missing(f)) return "-";
  double p = f * 100;
  return std::fabs(p) < 1 ? fmt::format("{:+.2f}%", p) : fmt::format("{:+.1f}%", p);
}

std::string cell_rate(double v) {
  if (missing(v)) return "-";
  double a = std::fabs(v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 1 || a == 0) return fmt::format("{:.2f}", v);
  return fmt::format("{:.2g}", v);  // CPU-backend rates: 0.0017, not 0.00
}

std::string cell_ratio(double r) {
  if (missing(r)) return "-";
  return r < 100 ? fmt::format("{:.2f}x", r) : fmt::format("{:.0f}x", r);
}

std::string cell_launches(const RowView& r) {
  if (r.launches_expected < 0 && r.launches_measured < 0) return "-";
  if (r.launches_expected < 0) return std::to_string(r.launches_measured);  // no contract (peer rows)
  std::string m = r.launches_measured >= 0 ? std::to_string(r.launches_measured) : "?";
  std::string e = r.launches_expected >= 0 ? std::to_string(r.launches_expected) : "?";
  return m + "/" + e + (r.launches_mismatch ? "!" : r.launches_explained ? "^" : "");
}

std::string cell_rel_err(const RowView& r) {
  if (missing(r.rel_err)) return "-";
  return fmt::format("{:.1e}{}", r.rel_err, r.verify_passed == 0 ? "!" : "");
}

std::string cell_noise(const RowView& r) { return cell_pct(r.noise) + (r.noise_met == 0 ? "~" : ""); }

std::string cell_median(const RowView& r) { return cell_ms(r.median_ms) + (r.clock_low ? "@" : ""); }

std::string cell_reason(const RowView& r) {
  std::string s = r.reason.empty() ? "(no reason given)" : r.reason;
  if (!missing(r.rel_err)) {
    double tol = r.tolerance;
    s += missing(tol) ? fmt::format(" (rel-err {:.1e})", r.rel_err)
                      : fmt::format(" (rel-err {:.1e}, tolerance {:.1e})", r.rel_err, tol);
  }
  return s;
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n' || c == '\r') o += ' ';
    else o += c;
  }
  return o;
}

std::string csv_num(double v) { return missing(v) ? "" : fmt::format("{}", v); }

}  // namespace ab
