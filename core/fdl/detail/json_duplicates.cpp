#include "core/fdl/detail/json_duplicates.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <set>
#include <vector>

namespace mirror::fdl::detail {

namespace {

/// Events of Boost.JSON's SAX parser: keeps the keys of each open object, and stops at the
/// first one seen twice.
struct key_tracker {
    constexpr static std::size_t max_object_size = std::size_t(-1);
    constexpr static std::size_t max_array_size = std::size_t(-1);
    constexpr static std::size_t max_key_size = std::size_t(-1);
    constexpr static std::size_t max_string_size = std::size_t(-1);

    struct level {
        bool object = false;
        std::set<std::string, std::less<>> keys;
        std::string last; ///< the key whose value is being read, for the position
    };
    std::vector<level> open;
    std::string key;
    std::optional<std::string> duplicate;

    bool begin(bool object) {
        open.push_back({object, {}, {}});
        return true;
    }
    bool end() {
        open.pop_back();
        return true;
    }
    std::string position() const {
        std::string out;
        for (auto const& l : open)
            if (l.object && !l.last.empty())
                out += (out.empty() ? "" : ".") + l.last;
        return out;
    }

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&) { return begin(true); }
    bool on_object_end(std::size_t, boost::system::error_code&) { return end(); }
    bool on_array_begin(boost::system::error_code&) { return begin(false); }
    bool on_array_end(std::size_t, boost::system::error_code&) { return end(); }
    bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        key.append(s.data(), s.size());
        return true;
    }
    bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code& ec) {
        key.append(s.data(), s.size());
        auto& here = open.back();
        if (!here.keys.insert(key).second) {
            here.last.clear();
            std::string where = position();
            duplicate = (where.empty() ? "" : where + ".") + key;
            ec = boost::json::error::syntax; // stops the parser; `duplicate` says why
            return false;
        }
        here.last = std::move(key);
        key.clear();
        return true;
    }
    bool on_string_part(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_string(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t, boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_uint64(std::uint64_t, boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_double(double, boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_bool(bool, boost::system::error_code&) { return true; }
    bool on_null(boost::system::error_code&) { return true; }
    bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
};

} // namespace

std::optional<std::string> duplicate_json_key(std::string_view text) {
    boost::json::parse_options options;
    options.max_depth = 64;
    boost::json::basic_parser<key_tracker> parser(options);
    boost::system::error_code ec;
    parser.write_some(false, text.data(), text.size(), ec);
    return parser.handler().duplicate;
}

} // namespace mirror::fdl::detail
