#pragma once
// Reading the JSON files of a repository: FDL's own and the mirror's under `.fdl-mirror/`
// (leases, membership). Bounded parsing and field checks whose messages name the file and
// the field ("fdl.json: data_dir: wrong type, expected a string"); refusals are fdl_errc.

#include "verify/error.hpp"
#include "core/fdl/errors.hpp"
#include "core/fdl/json_limits.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::fdl {

/// Parses JSON text: valid UTF-8 only, at most 64 levels deep, nothing after the value,
/// into a tree of at most `max_tree_bytes` (fdl_errc::too_large past it, saying so). The
/// tree lives in one arena that goes with the value. `file` names the file in messages.
result<boost::json::value> parse_json(std::string_view text, std::string_view file,
                                      std::size_t max_tree_bytes = default_max_tree_bytes);

/// One JSON object of one file, with its dotted position (`catalog`, `tables.main.t`).
class object_fields {
public:
    object_fields(boost::json::object const& object, std::string_view file, std::string where);

    /// Parses `text` and expects an object at the top.
    static result<object_fields> top(boost::json::value const& value, std::string_view file);

    boost::json::value const* find(std::string_view key) const;
    boost::json::object const& object() const { return *object_; }

    result<std::string> string(std::string_view key) const;
    result<std::optional<std::string>> optional_string(std::string_view key) const;
    result<std::uint64_t> count(std::string_view key) const;
    result<std::optional<std::uint64_t>> optional_count(std::string_view key) const;
    result<std::optional<bool>> optional_bool(std::string_view key) const;
    result<object_fields> child(std::string_view key) const;
    result<std::optional<object_fields>> optional_child(std::string_view key) const;
    /// An array field; absent is an empty array.
    result<boost::json::array const*> optional_array(std::string_view key) const;

    /// "file: where.key: reason", classified as `code`.
    error fail(fdl_errc code, std::string_view key, std::string_view reason) const;
    /// The dotted name of `key` in this object.
    std::string name_of(std::string_view key) const;
    std::string_view file() const { return file_; }

private:
    boost::json::object const* object_;
    std::string file_;
    std::string where_;
};

/// Reads fields of one object into variables and keeps the first error, so that a parser
/// lists its fields instead of repeating "read it, check it, return its error" for each:
///
///     field_reader read(fields);
///     read.string("path", entry.path).count("rows", entry.rows).optional_count("footer_bytes", entry.footer_bytes);
///     if (auto ok = read.done(); !ok)
///         return ok.error();
///
/// After an error the remaining reads do nothing, so the first field in the parser's order
/// that fails is the one reported, with object_fields' message.
class field_reader {
public:
    explicit field_reader(object_fields const& fields) : fields_(fields) {}
    field_reader& string(std::string_view key, std::string& out);
    field_reader& optional_string(std::string_view key, std::optional<std::string>& out);
    field_reader& count(std::string_view key, std::uint64_t& out);
    field_reader& optional_count(std::string_view key, std::optional<std::uint64_t>& out);
    field_reader& optional_bool(std::string_view key, std::optional<bool>& out);
    /// Fails with the first error; afterwards as before.
    field_reader& check(result<void> const& checked);
    /// The first error, if any.
    result<void> done() const;
    bool ok() const { return !first_; }

private:
    template <class T, class Read>
    field_reader& take(T& out, Read read);

    object_fields const& fields_;
    std::optional<error> first_;
};

/// The JSON type's name for messages: "a string", "a number", "an object"…
std::string_view type_name(boost::json::value const& value) noexcept;

/// Reads a non-negative integer from a JSON number (no fractions, no negatives).
std::optional<std::uint64_t> as_count(boost::json::value const& value) noexcept;

} // namespace mirror::fdl
