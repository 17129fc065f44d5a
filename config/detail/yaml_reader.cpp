#include "config/detail/yaml_reader.hpp"

#include "config/units.hpp"
#include "config/values.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace mirror::config::detail {

namespace {

int place(int zero_based) { return zero_based < 0 ? 0 : zero_based + 1; }

/// The optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t const cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// A control character as quote() shows it: "\x0a".
std::string escaped(unsigned char byte) {
    char text[8];
    std::snprintf(text, sizeof text, "\\x%02x", byte);
    return text;
}

/// `message` on one line: control characters shown as quote() shows them. Our own texts
/// quote what they repeat; yaml-cpp's do not ("unknown escape character: " and the raw
/// byte), and a line break there would split a problem in check-config's output and the
/// log. Found by tests/fuzz/config_fuzz.cpp.
std::string one_line(std::string message) {
    std::string out;
    for (char c : message) {
        auto const byte = static_cast<unsigned char>(c);
        out += byte < 0x20 || byte == 0x7f ? escaped(byte) : std::string(1, c);
    }
    return out;
}

} // namespace

void problem_list::add(YAML::Mark const& mark, std::string message) {
    problems_.push_back({file_, place(mark.line), place(mark.column), one_line(std::move(message))});
}

void problem_list::add_whole_file(std::string message) {
    problems_.push_back({file_, 0, 0, one_line(std::move(message))});
}

config_problems problem_list::take() {
    std::stable_sort(problems_.begin(), problems_.end(), [](config_problem const& a, config_problem const& b) {
        return std::pair(a.line, a.column) < std::pair(b.line, b.column);
    });
    return std::move(problems_);
}

std::string quote(std::string_view text) {
    std::string out = "'";
    std::size_t shown = 0;
    for (char c : text) {
        if (++shown > 64) {
            // Not in the middle of a UTF-8 sequence: drop its continuation bytes and lead.
            while (out.size() > 1 && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80)
                out.pop_back();
            if (out.size() > 1 && (static_cast<unsigned char>(out.back()) & 0x80) != 0)
                out.pop_back();
            out += "…";
            break;
        }
        auto const byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            out += escaped(byte);
        } else {
            out += c;
        }
    }
    return out + "'";
}

std::string_view kind_of(YAML::Node const& node) {
    switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a string";
    default: return "null";
    }
}

std::string_view closest_key(std::string_view key, std::vector<std::string> const& known) {
    std::string folded(key);
    std::transform(folded.begin(), folded.end(), folded.begin(), lower);
    std::string_view best;
    std::size_t best_distance = 0;
    for (auto const& candidate : known) {
        std::size_t const distance = edit_distance(folded, candidate);
        if (best.empty() || distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    // Two edits, and fewer than half the key's letters: "intervall", "alowed_signer",
    // "Listen"; not "port" for "sort".
    if (best.empty() || best_distance > 2 || best_distance * 2 >= key.size())
        return {};
    return best;
}

map_reader::map_reader(YAML::Node const& node, std::string what, problem_list& problems)
    : what_(std::move(what)), mark_(node.Mark()), problems_(problems) {
    std::string const in = what_.empty() ? " at the top level" : " in " + what_;
    for (auto const& pair : node) {
        YAML::Node const key = pair.first; // a copy: the pair is a proxy of the iterator
        if (!key.IsScalar()) {
            problems_.add(key.Mark(), "a key must be a string, not " + std::string(kind_of(key)) + in);
            continue;
        }
        auto const same =
            std::find_if(entries_.begin(), entries_.end(), [&](entry const& e) { return e.key == key.Scalar(); });
        if (same != entries_.end()) {
            problems_.add(key.Mark(), "duplicate key " + quote(key.Scalar()) + in + " (first at line " +
                                          std::to_string(place(same->key_mark.line)) + ")");
            continue;
        }
        entries_.push_back({key.Scalar(), key.Mark(), pair.second});
    }
}

std::string map_reader::subject(std::string_view key) const {
    return what_.empty() ? std::string(key) : what_ + ": " + std::string(key);
}

map_reader::entry const* map_reader::lookup(std::string_view key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end())
        known_.emplace_back(key);
    auto const it = std::find_if(entries_.begin(), entries_.end(), [&](entry const& e) { return e.key == key; });
    return it == entries_.end() ? nullptr : &*it;
}

std::optional<YAML::Node> map_reader::find(std::string_view key) {
    auto const* found = lookup(key);
    if (found == nullptr)
        return std::nullopt;
    return found->value;
}

YAML::Mark map_reader::key_mark(std::string_view key) const {
    auto const it = std::find_if(entries_.begin(), entries_.end(), [&](entry const& e) { return e.key == key; });
    return it == entries_.end() ? mark_ : it->key_mark;
}

bool map_reader::require(std::string_view key) {
    if (lookup(key) != nullptr)
        return true;
    problems_.add(mark_, (what_.empty() ? "missing top-level key " : what_ + ": missing key ") + quote(key));
    return false;
}

void map_reader::type_problem(std::string_view key, YAML::Node const& value, std::string_view expected) {
    if (value.IsNull()) // a null node's mark is the next token's: point at its key instead
        problems_.add(key_mark(key), subject(key) + " has no value");
    else
        problems_.add(value.Mark(),
                      subject(key) + " must be " + std::string(expected) + ", not " + std::string(kind_of(value)));
}

std::optional<std::pair<std::string, YAML::Mark>> map_reader::scalar(std::string_view key, std::string_view expected) {
    auto const* found = lookup(key);
    if (found == nullptr)
        return std::nullopt;
    if (!found->value.IsScalar()) {
        type_problem(key, found->value, expected);
        return std::nullopt;
    }
    return std::pair(found->value.Scalar(), found->value.Mark());
}

std::optional<std::string> map_reader::text(std::string_view key) {
    auto found = scalar(key, "a string");
    if (found && found->first.empty()) {
        problems_.add(found->second, subject(key) + " is empty");
        return std::nullopt;
    }
    return found ? std::optional(std::move(found->first)) : std::nullopt;
}

std::optional<bool> map_reader::flag(std::string_view key) {
    auto found = scalar(key, "true or false");
    if (!found)
        return std::nullopt;
    // YAML 1.2's core schema; not YAML 1.1's yes, no, on and off, which surprise people.
    for (std::string_view yes : {"true", "True", "TRUE"})
        if (found->first == yes)
            return true;
    for (std::string_view no : {"false", "False", "FALSE"})
        if (found->first == no)
            return false;
    problems_.add(found->second, subject(key) + " " + quote(found->first) + " is not true or false");
    return std::nullopt;
}

std::optional<std::chrono::milliseconds> map_reader::duration(std::string_view key, std::chrono::milliseconds min) {
    auto found = scalar(key, "a duration such as 30s, 5m or 1h30m");
    if (!found)
        return std::nullopt;
    auto value = parse_duration(found->first);
    if (!value) {
        bool const bare =
            parse_count(found->first, std::numeric_limits<std::uint64_t>::max()).has_value() || found->first == "0";
        problems_.add(found->second, subject(key) + " " + quote(found->first) + " is not a duration such as " +
                                         (bare ? "30s, 5m or 1h30m: give a unit" : "500ms, 30s, 5m, 1h or 1h30m"));
        return std::nullopt;
    }
    if (*value < min) {
        problems_.add(found->second,
                      subject(key) + " " + quote(found->first) + " is shorter than " + format_duration(min));
        return std::nullopt;
    }
    return value;
}

std::optional<std::uint64_t> map_reader::size(std::string_view key, std::uint64_t min, std::uint64_t max) {
    auto found = scalar(key, "a size such as 64MiB");
    if (!found)
        return std::nullopt;
    auto value = parse_size(found->first);
    if (!value) {
        problems_.add(found->second, subject(key) + " " + quote(found->first) +
                                         " is not a size such as 4096, 512KiB, 64MiB, 1GiB or 100MB");
        return std::nullopt;
    }
    if (*value < min || *value > max) {
        problems_.add(found->second, subject(key) + " " + quote(found->first) + " is " +
                                         (*value < min ? "below " + format_size(min) : "above " + format_size(max)));
        return std::nullopt;
    }
    return value;
}

std::optional<std::uint64_t> map_reader::count(std::string_view key, std::uint64_t max) {
    auto found = scalar(key, "a whole number");
    if (!found)
        return std::nullopt;
    auto value = parse_count(found->first, max);
    if (!value)
        problems_.add(found->second, subject(key) + " " + quote(found->first) + " is not a whole number from 1 to " +
                                         std::to_string(max));
    return value;
}

std::optional<double> map_reader::percentage(std::string_view key) {
    auto found = scalar(key, "a percentage such as 10%");
    if (!found)
        return std::nullopt;
    auto value = parse_percentage(found->first);
    if (!value)
        problems_.add(found->second, subject(key) + " " + quote(found->first) + " is not a percentage from 0% to 100%");
    return value;
}

std::optional<YAML::Node> map_reader::mapping(std::string_view key) {
    auto const* found = lookup(key);
    if (found == nullptr || found->value.IsNull())
        return std::nullopt;
    if (!found->value.IsMap()) {
        type_problem(key, found->value, "a mapping");
        return std::nullopt;
    }
    return found->value;
}

std::vector<YAML::Node> map_reader::list(std::string_view key) {
    auto const* found = lookup(key);
    if (found == nullptr || found->value.IsNull())
        return {};
    if (!found->value.IsSequence()) {
        type_problem(key, found->value, "a list");
        return {};
    }
    return {found->value.begin(), found->value.end()};
}

void map_reader::finish() {
    for (auto const& e : entries_) {
        if (std::find(known_.begin(), known_.end(), e.key) != known_.end())
            continue;
        std::string message = "unknown " + std::string(what_.empty() ? "top-level key " : "key ") + quote(e.key);
        if (!what_.empty())
            message += " in " + what_;
        if (auto near = closest_key(e.key, known_); !near.empty())
            message += " (did you mean " + quote(near) + "?)";
        problems_.add(e.key_mark, std::move(message));
    }
}

} // namespace mirror::config::detail
