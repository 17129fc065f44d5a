#pragma once
// Walking a yaml-cpp node tree while recording every problem with its place. Private to
// config/: yaml-cpp's names stay out of the public headers.

#include "config/config_problem.hpp"

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mirror::config::detail {

/// The problems found so far in one file.
class problem_list {
public:
    explicit problem_list(std::string file) : file_(std::move(file)) {}

    /// A problem at `mark` (yaml-cpp's, 0-based); a null mark gives line and column 0.
    void add(YAML::Mark const& mark, std::string message);
    /// A problem of the whole file (line and column 0).
    void add_whole_file(std::string message);
    bool empty() const noexcept { return problems_.empty(); }
    /// The problems in the order of their places; equal places keep the order found.
    config_problems take();

private:
    std::string file_;
    config_problems problems_;
};

/// `text` in single quotes for a message: cut after 64 characters ("…"), control
/// characters shown as \xNN, so a message stays one line.
std::string quote(std::string_view text);

/// What a node is, for "must be …, not …" messages: "a mapping", "a list", "a string", "null".
std::string_view kind_of(YAML::Node const& node);

/// The known key closest to `key` by edit distance (a typo, a transposition, a wrong
/// case), or empty when none is close enough to be a likely meant key.
std::string_view closest_key(std::string_view key, std::vector<std::string> const& known);

/// Reads one mapping whose keys are known. The constructor records keys that are not
/// strings and keys given twice (yaml-cpp keeps the first silently; so do we, after
/// recording the second). Each getter makes its key known; finish() records every key no
/// getter asked for. Getters return nullopt when the key is absent or its value is bad, and
/// record the bad value. `what` names the mapping in messages: "repository 'population'",
/// "defaults", or empty for the top level.
class map_reader {
public:
    map_reader(YAML::Node const& node, std::string what, problem_list& problems);

    std::string const& what() const noexcept { return what_; }
    YAML::Mark mark() const { return mark_; }
    problem_list& problems() noexcept { return problems_; }
    /// "repository 'population': interval", or the bare key at the top level.
    std::string subject(std::string_view key) const;

    /// The value of `key`, or nullopt when absent.
    std::optional<YAML::Node> find(std::string_view key);
    /// The place of `key` itself (for problems of a null value), else of the mapping.
    YAML::Mark key_mark(std::string_view key) const;
    /// Records "missing key" at the mapping when `key` is absent; true when present.
    bool require(std::string_view key);

    /// A scalar's text and place. `expected` completes "must be …" for other node kinds.
    std::optional<std::pair<std::string, YAML::Mark>> scalar(std::string_view key, std::string_view expected);
    std::optional<std::string> text(std::string_view key); ///< a non-empty string
    std::optional<bool> flag(std::string_view key);        ///< true or false
    std::optional<std::chrono::milliseconds> duration(std::string_view key, std::chrono::milliseconds min);
    std::optional<std::uint64_t> size(std::string_view key, std::uint64_t min, std::uint64_t max);
    std::optional<std::uint64_t> count(std::string_view key, std::uint64_t max); ///< 1..max
    std::optional<double> percentage(std::string_view key);                      ///< 0%..100%

    /// One of a fixed set of words, such as "plain" or "json".
    template <class Enum>
    std::optional<Enum> word(std::string_view key, std::initializer_list<std::pair<std::string_view, Enum>> words) {
        auto found = scalar(key, "a string");
        if (!found)
            return std::nullopt;
        std::string choices;
        for (auto const& [name, value] : words) {
            if (found->first == name)
                return value;
            choices += choices.empty() ? "" : ", ";
            choices += name;
        }
        problems_.add(found->second, subject(key) + " " + quote(found->first) + " is not one of " + choices);
        return std::nullopt;
    }

    /// A nested mapping; nullopt when absent or null (an empty section), or not a mapping.
    std::optional<YAML::Node> mapping(std::string_view key);
    /// The items of a list; none when absent or null, or not a list.
    std::vector<YAML::Node> list(std::string_view key);

    /// Records each key that no getter asked for, suggesting the closest known one.
    void finish();

private:
    struct entry {
        std::string key;
        YAML::Mark key_mark;
        YAML::Node value;
    };

    entry const* lookup(std::string_view key);
    void type_problem(std::string_view key, YAML::Node const& value, std::string_view expected);

    std::string what_;
    YAML::Mark mark_;
    problem_list& problems_;
    std::vector<entry> entries_;     ///< the first occurrence of each string key, in file order
    std::vector<std::string> known_; ///< every key a getter asked for
};

} // namespace mirror::config::detail
