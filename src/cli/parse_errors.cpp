// Parse errors and post-parse notes in the project's one-line style (cli/parse_errors.hpp).
#include "cli/parse_errors.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace ab {

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The command the parse chose: the deepest subcommand given, else the top level (run's flags).
const CLI::App& chosen(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    auto subs = at->get_subcommands();
    if (subs.empty()) return *at;
    at = subs.front();
  }
}

std::string command_name(const CLI::App& app, const CLI::App& top) {
  return &app == &top ? std::string("attnbench") : "attnbench " + app.get_name();
}

// "report: " before a subcommand's message; nothing at the top level (the line already starts "attnbench:").
std::string prefix_of(const CLI::App& app, const CLI::App& top) { return &app == &top ? "" : app.get_name() + ": "; }

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
  }
  return out;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    out.push_back(sub->get_name());
  return out;
}

std::string positional_usage(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : app.get_options())
    if (o->get_positional()) {
      std::string name = o->get_name(true, false);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
      out += " " + (o->get_required() ? name : "[" + name + "]");
      if (o->get_expected_max() > 1) out += "...";
    }
  return out;
}

// The first argument CLI11 did not expect, from its message "The following argument(s) was/were not expected: X Y".
std::string first_extra(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos) return "";
  std::string rest = message.substr(colon + 2);
  return rest.substr(0, rest.find(' '));
}

std::string extras_line(const CLI::App& top, const CLI::App& at, const std::string& message) {
  const std::string extra = first_extra(message);
  const std::string help = fmt::format("`{} --help` lists them", command_name(at, top));
  if (extra.rfind("-", 0) == 0) {
    const std::string name = extra.substr(0, extra.find('='));
    std::string normal = name;
    std::replace(normal.begin() + std::min<std::size_t>(2, normal.size()), normal.end(), '-', '_');
    const std::string near = closest_name(normal, flag_names(at));
    if (!near.empty()) return fmt::format("{}unknown flag '{}'; did you mean '{}'?", prefix_of(at, top), name, near);
    return fmt::format("{}unknown flag '{}' ({})", prefix_of(at, top), name, help);
  }
  if (&at == &top) {
    const std::string near = closest_name(extra, command_names(top));
    if (!near.empty()) return fmt::format("unknown command '{}'; did you mean '{}'?", extra, near);
    std::string all;
    for (const std::string& c : command_names(top)) all += (all.empty() ? "" : ", ") + c;
    return fmt::format("unknown command or argument '{}' (commands: {})", extra, all);
  }
  return fmt::format("{}unexpected argument '{}' (usage: {}{} [OPTIONS])", prefix_of(at, top), extra,
                     command_name(at, top), positional_usage(at));
}

std::string required_line(const CLI::App& top, const CLI::App& at, const std::string& message) {
  const std::string suffix = " is required";
  std::string subject = message;
  if (subject.size() > suffix.size() && subject.compare(subject.size() - suffix.size(), suffix.size(), suffix) == 0)
    subject.resize(subject.size() - suffix.size());
  for (const CLI::Option* o : at.get_options())
    if (o->get_positional() && o->get_name(true, false) == subject) {
      std::string upper = subject;
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
      return fmt::format("{} needs {} (usage: {}{} [OPTIONS])", command_name(at, top), upper, command_name(at, top),
                         positional_usage(at));
    }
  return fmt::format("{} needs {}", command_name(at, top), subject);
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& k : known) {
    std::size_t d = edit_distance(word, k);
    if (word.size() >= 3 && k.rfind(word, 0) == 0) d = std::min<std::size_t>(d, 1);  // a prefix ("--verif")
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  return best;
}

std::string parse_error_line(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App& at = chosen(app);
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) return extras_line(app, at, what);
  if (dynamic_cast<const CLI::RequiredError*>(&e)) return required_line(app, at, what);
  return what;
}

std::vector<std::string> repeated_flag_notes(const CLI::App& app) {
  std::vector<std::string> notes;
  const CLI::App& at = chosen(app);
  for (const CLI::Option* o : at.get_options()) {
    if (o->get_positional() || o->count() < 2) continue;
    if (o->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeLast) continue;  // repeatable by design
    const CLI::results_t& given = o->results();
    if (std::all_of(given.begin(), given.end(), [&](const std::string& v) { return v == given.front(); })) continue;
    const std::string name = o->get_lnames().empty() ? o->get_name() : "--" + o->get_lnames().front();
    notes.push_back(fmt::format("{} given {} times; the last, '{}', is used", name, o->count(), given.back()));
  }
  return notes;
}

}  // namespace ab
