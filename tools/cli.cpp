#include "tools/cli.h"

#include "executors/function.h"
#include "support/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <limits>
#include <variant>

namespace gj::cli {

extern const char* const kCommit;  // written by cmake/Commit.cmake

namespace {

// The long and short names of `app`'s options, with their dashes.
std::vector<std::string> optionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> subcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(s->get_name());
  return names;
}

bool isNumber(std::string_view s) {
  double v;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

struct Problem {
  std::string what, hint;
};

// What went wrong, read off the arguments themselves: an unknown subcommand, or an option that neither
// the subcommand nor the tool has. Nothing when every word is known (CLI11's own message then stands).
std::optional<Problem> unknownWord(const CLI::App& app, const std::vector<std::string>& args) {
  const std::vector<std::string> subs = subcommandNames(app);
  const CLI::App* sub = nullptr;
  size_t from = 0;
  for (size_t i = 0; i < args.size() && !subs.empty(); ++i) {
    if (std::find(subs.begin(), subs.end(), args[i]) == subs.end()) continue;
    sub = app.get_subcommand(args[i]);
    from = i + 1;
    break;
  }
  const std::string tool = app.get_name();
  if (!subs.empty() && !sub && app.get_require_subcommand_min() > 0) {
    for (const std::string& a : args) {
      if (a.starts_with("-")) continue;
      return Problem{fmt::format("unknown subcommand '{}'{}", a, didYouMean(a, subs)),
                     fmt::format("subcommands: {}; run '{} --help'", fmt::join(subs, ", "), tool)};
    }
    return Problem{fmt::format("a subcommand is required: {}", fmt::join(subs, ", ")),
                   fmt::format("run '{} SUBCOMMAND --help' for its options", tool)};
  }
  std::vector<std::string> known = optionNames(app);
  std::string where = tool;
  if (sub) {
    std::vector<std::string> own = optionNames(*sub);
    known.insert(known.end(), own.begin(), own.end());
    where += " " + sub->get_name();
  }
  for (size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (!a.starts_with("-") || a == "-" || isNumber(a)) continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    return Problem{fmt::format("unknown option '{}' for {}{}", name, where,
                               didYouMean(name, known)),
                   fmt::format("run '{} --help' for its options", where)};
  }
  return std::nullopt;
}

void say(const std::string& tool, const Problem& p) {
  std::cerr << fmt::format("{}: error: {}\n  hint: {}\n", tool, p.what, p.hint);
}

}  // namespace

std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    std::vector<std::string> args(argv + 1, argv + argc);
    const std::string tool = app.get_name();
    if (auto p = unknownWord(app, args)) {
      say(tool, *p);
      return 1;
    }
    std::string where = tool;
    for (const CLI::App* s : app.get_subcommands()) where += " " + s->get_name();
    say(tool, {e.what(), fmt::format("run '{} --help' for its options", where)});
    return 1;
  }
}

namespace {

// `s` as a whole integer, or the reason it is not one.
std::variant<long long, std::string> integer(const std::string& s) {
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is too large", s);
  if (ec != std::errc() || end != s.data() + s.size()) return fmt::format("must be a whole number, got '{}'", s);
  return v;
}

CLI::Validator integerCheck(long long lo, long long hi, std::string description, std::string range) {
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        auto v = integer(s);
        if (auto* why = std::get_if<std::string>(&v)) return *why;
        long long x = std::get<long long>(v);
        if (x < lo || x > hi) return fmt::format("must be {}, got {}", range, x);
        return {};
      },
      std::move(description));
}

}  // namespace

CLI::Validator positive() {
  return integerCheck(1, std::numeric_limits<long long>::max(), "POSITIVE", "a positive integer");
}

CLI::Validator nonNegative() {
  return integerCheck(0, std::numeric_limits<long long>::max(), "NONNEGATIVE", "0 or more");
}

CLI::Validator between(long long lo, long long hi) {
  return integerCheck(lo, hi, fmt::format("{}-{}", lo, hi), fmt::format("from {} to {}", lo, hi));
}

CLI::Validator oneOf(std::vector<std::string> values) {
  std::string description = fmt::format("{{{}}}", fmt::join(values, ","));
  return CLI::Validator(
      [values](std::string& s) -> std::string {
        if (std::find(values.begin(), values.end(), s) != values.end()) return {};
        return fmt::format("must be one of {}, got '{}'{}", fmt::join(values, ", "), s, didYouMean(s, values));
      },
      std::move(description));
}

namespace {

std::vector<FuserKind> fuserChoices(bool withNone) {
  std::vector<FuserKind> out;
  for (FuserKind k : allFusers())
    if (withNone || k != FuserKind::None) out.push_back(k);
  return out;
}

// A table's kinds as an option's choices: the help, "what: a (what a does), b (what b does)", and the names.
template <typename Kind, typename Name, typename Help>
std::pair<std::string, std::vector<std::string>> choices(const std::string& what, const std::vector<Kind>& kinds,
                                                         Name name, Help help) {
  std::vector<std::string> names, described;
  for (Kind k : kinds) {
    names.emplace_back(name(k));
    described.push_back(fmt::format("{} ({})", name(k), help(k)));
  }
  return {fmt::format("{}: {}", what, fmt::join(described, ", ")), names};
}

// `flag` NAME (one kind, parsed by `fromName`), or with `several` NAME,NAME,... into a vector.
template <typename Kind, typename Name, typename Help, typename FromName>
CLI::Option* kindOption(CLI::App* app, const std::string& flag, const std::string& what,
                        const std::vector<Kind>& kinds, Name name, Help help, FromName fromName, Kind* one,
                        std::vector<Kind>* several) {
  auto [text, names] = choices(what, kinds, name, help);
  CLI::Option* o = several
      ? app->add_option_function<std::vector<std::string>>(
                flag,
                [several, fromName](const std::vector<std::string>& v) {
                  several->clear();
                  for (const std::string& s : v) several->push_back(fromName(s));
                },
                text)
            ->delimiter(',')
      : app->add_option_function<std::string>(flag, [one, fromName](const std::string& s) { *one = fromName(s); },
                                              text);
  return o->check(oneOf(names));
}

std::vector<ExecutorKind> executorChoices() { return {allExecutors().begin(), allExecutors().end()}; }

}  // namespace

CLI::Option* addFuserOption(CLI::App* app, FuserKind& fuser, const std::string& what, bool withNone) {
  return kindOption(app, "--fuser", what, fuserChoices(withNone), fuserName, fuserHelp, fuserFromName, &fuser,
                    static_cast<std::vector<FuserKind>*>(nullptr));
}

CLI::Option* addFusersOption(CLI::App* app, std::vector<FuserKind>& fusers, const std::string& what) {
  return kindOption(app, "--fuser", what, fuserChoices(true), fuserName, fuserHelp, fuserFromName,
                    static_cast<FuserKind*>(nullptr), &fusers);
}

CLI::Option* addExecutorOption(CLI::App* app, const std::string& flag, ExecutorKind& executor,
                               const std::string& what) {
  return kindOption(app, flag, what, executorChoices(), executorName, executorHelp, executorFromName, &executor,
                    static_cast<std::vector<ExecutorKind>*>(nullptr));
}

CLI::Option* addExecutorsOption(CLI::App* app, std::vector<ExecutorKind>& executors, const std::string& what) {
  return kindOption(app, "--executor", what, executorChoices(), executorName, executorHelp, executorFromName,
                    static_cast<ExecutorKind*>(nullptr), &executors);
}

std::string versionString() { return fmt::format("graphjit {} (commit {})", GJ_VERSION, kCommit); }

}  // namespace gj::cli
