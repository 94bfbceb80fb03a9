// The help formatter (cli/help_format.hpp).
#include "cli/help_format.hpp"

#include <string>

namespace ab {

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(34); }

  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    if (is_positional) return opt->get_name(true, false);
    std::string out;
    for (const std::string& s : opt->get_snames()) out += "-" + s + ", ";
    const auto& longs = opt->get_lnames();
    out += longs.empty() ? std::string() : "--" + longs.front();
    if (!out.empty() && out.size() >= 2 && out.compare(out.size() - 2, 2, ", ") == 0) out.resize(out.size() - 2);
    return out;
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_expected_max() == 0 || opt->get_positional()) return "";  // a flag; a positional's name says it
    if (opt->get_expected_min() == 0) return "[=VALUE]";     // a flag that may take a value (--causal=false,true)
    return opt->get_expected_max() == CLI::detail::expected_max_vector_size ? "=VALUE ..." : "=VALUE";
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    const std::string def = opt->get_default_str();
    if (!def.empty() && opt->get_expected_max() != 0 && desc.find("default") == std::string::npos)
      desc += " (default: " + def + ")";
    return desc;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace ab
