#include "core/fdl/detail/json_top_level.hpp"

#include "core/fdl/detail/json_duplicates.hpp"
#include "core/fdl/errors.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <vector>

namespace mirror::fdl::detail {

namespace {

/// Events of Boost.JSON's SAX parser: notes the kind of the document and of each wanted
/// key's value at the top level, and the text of those that are strings.
struct top_level_reader {
    constexpr static std::size_t max_object_size = std::size_t(-1);
    constexpr static std::size_t max_array_size = std::size_t(-1);
    constexpr static std::size_t max_key_size = std::size_t(-1);
    constexpr static std::size_t max_string_size = std::size_t(-1);

    std::vector<std::string_view> wanted;
    top_level out;
    int depth = 0;
    std::string key;
    bool key_wanted = false;
    std::string text; ///< of a wanted string value, in parts

    /// A value begins at `depth` (before any nesting it opens); at the top level, its key
    /// is then done with.
    void value(std::string_view kind) {
        if (depth == 0)
            out.kind = kind;
        else if (depth == 1 && key_wanted)
            out.fields[key] = {kind, std::nullopt};
        if (depth == 1)
            forget_key();
    }
    void forget_key() {
        key.clear();
        key_wanted = false;
    }
    bool open(std::string_view kind) {
        value(kind);
        ++depth;
        return true;
    }
    bool close() {
        --depth;
        return true;
    }

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&) { return open("an object"); }
    bool on_object_end(std::size_t, boost::system::error_code&) { return close(); }
    bool on_array_begin(boost::system::error_code&) { return open("an array"); }
    bool on_array_end(std::size_t, boost::system::error_code&) { return close(); }
    bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        if (depth == 1)
            key.append(s.data(), s.size());
        return true;
    }
    bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        if (depth != 1)
            return true;
        key.append(s.data(), s.size());
        key_wanted = std::find(wanted.begin(), wanted.end(), key) != wanted.end();
        if (!key_wanted)
            key.clear();
        return true;
    }
    bool on_string_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        if (depth == 1 && key_wanted)
            text.append(s.data(), s.size());
        return true;
    }
    bool on_string(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        if (depth == 1 && key_wanted) {
            text.append(s.data(), s.size());
            out.fields[key] = {"a string", std::move(text)};
        } else if (depth == 0) {
            out.kind = "a string";
        }
        text.clear();
        if (depth == 1)
            forget_key();
        return true;
    }
    bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t, boost::json::string_view, boost::system::error_code&) { return scalar("a number"); }
    bool on_uint64(std::uint64_t, boost::json::string_view, boost::system::error_code&) { return scalar("a number"); }
    bool on_double(double, boost::json::string_view, boost::system::error_code&) { return scalar("a number"); }
    bool on_bool(bool, boost::system::error_code&) { return scalar("a boolean"); }
    bool on_null(boost::system::error_code&) { return scalar("null"); }
    bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }

    bool scalar(std::string_view kind) {
        value(kind);
        return true;
    }
};

} // namespace

result<top_level> read_top_level(std::string_view text, std::string_view file,
                                 std::initializer_list<std::string_view> keys) {
    boost::json::parse_options options;
    options.max_depth = 64;
    options.allow_invalid_utf8 = false;
    boost::json::basic_parser<top_level_reader> parser(options);
    parser.handler().wanted.assign(keys.begin(), keys.end());
    boost::system::error_code ec;
    std::size_t read = parser.write_some(false, text.data(), text.size(), ec);
    if (!ec && read < text.size())
        ec = boost::json::error::extra_data;
    if (ec)
        return make_error(fdl_errc::bad_json, std::string(file) + ": not valid JSON (" + ec.message() + ")");
    // Two values for one key would be read two ways by two parsers: never take either.
    if (auto duplicate = duplicate_json_key(text))
        return make_error(fdl_errc::bad_json, std::string(file) + ": the key '" + duplicate->substr(0, 200) +
                                                  "' appears twice in one object");
    return std::move(parser.handler().out);
}

} // namespace mirror::fdl::detail
