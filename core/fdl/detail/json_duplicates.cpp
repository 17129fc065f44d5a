#include "core/fdl/detail/json_duplicates.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mirror::fdl::detail {

namespace {

std::uint64_t key_hash(std::string const& key) { return std::hash<std::string>{}(key); }

/// Handlers of Boost.JSON's SAX parser share what they ignore.
struct ignoring_values {
    constexpr static std::size_t max_object_size = std::size_t(-1);
    constexpr static std::size_t max_array_size = std::size_t(-1);
    constexpr static std::size_t max_key_size = std::size_t(-1);
    constexpr static std::size_t max_string_size = std::size_t(-1);

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
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
    bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        key.append(s.data(), s.size());
        return true;
    }

    std::string key; ///< the key being read, its escapes decoded
};

/// The first pass: each open object keeps the hashes of its keys (8 bytes a key, never
/// the keys themselves: a file of many short keys would cost many times its text), and
/// at its end, sorted, two equal hashes name a suspect: that object, by its place among
/// the document's objects, and the hash.
struct hash_scan : ignoring_values {
    struct level {
        bool object = false;
        std::deque<std::uint64_t> hashes; ///< grows in blocks: no copy of them all at twice the size
        std::size_t ordinal = 0; ///< of the object, in document order
    };
    std::vector<level> open;
    std::size_t objects = 0;
    std::optional<std::pair<std::size_t, std::uint64_t>> suspect; ///< object ordinal, hash

    bool on_object_begin(boost::system::error_code&) {
        open.push_back({true, {}, objects++});
        return true;
    }
    bool on_array_begin(boost::system::error_code&) {
        open.push_back({false, {}, 0});
        return true;
    }
    bool on_array_end(std::size_t, boost::system::error_code&) {
        open.pop_back();
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code& ec) {
        auto& hashes = open.back().hashes;
        std::sort(hashes.begin(), hashes.end());
        auto twice = std::adjacent_find(hashes.begin(), hashes.end());
        if (twice != hashes.end()) {
            suspect.emplace(open.back().ordinal, *twice);
            ec = boost::json::error::syntax; // stops the parser; the second pass says which key
            return false;
        }
        open.pop_back();
        return true;
    }
    bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code&) {
        key.append(s.data(), s.size());
        open.back().hashes.push_back(key_hash(key));
        key.clear();
        return true;
    }
};

/// The second pass, only when the first found a suspect: in that object, the keys of that
/// hash, compared as text (a hash shared by two different keys is no duplicate), with the
/// dotted position of the one seen twice.
struct key_finder : ignoring_values {
    std::size_t ordinal = 0;
    std::uint64_t hash = 0;

    struct level {
        bool object = false;
        std::string last; ///< the key whose value is being read, for the position
    };
    std::vector<level> open;
    std::size_t objects = 0;
    std::size_t suspect_depth = 0; ///< open.size() while the suspect object is the innermost; 0 when closed
    std::vector<std::string> seen; ///< its keys of that hash
    std::optional<std::string> duplicate;

    std::string position() const {
        std::string out;
        for (auto const& l : open)
            if (l.object && !l.last.empty())
                out += (out.empty() ? "" : ".") + l.last;
        return out;
    }
    bool on_object_begin(boost::system::error_code&) {
        open.push_back({true, {}});
        if (objects++ == ordinal)
            suspect_depth = open.size();
        return true;
    }
    bool on_array_begin(boost::system::error_code&) {
        open.push_back({false, {}});
        return true;
    }
    bool end() {
        if (open.size() == suspect_depth)
            suspect_depth = 0;
        open.pop_back();
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code&) { return end(); }
    bool on_array_end(std::size_t, boost::system::error_code&) { return end(); }
    bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code& ec) {
        key.append(s.data(), s.size());
        auto& here = open.back();
        if (open.size() == suspect_depth && key_hash(key) == hash) {
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
                here.last.clear();
                std::string where = position();
                duplicate = (where.empty() ? "" : where + ".") + key;
                ec = boost::json::error::syntax; // stops the parser; `duplicate` says why
                return false;
            }
            seen.push_back(key);
        }
        here.last = std::move(key);
        key.clear();
        return true;
    }
};

} // namespace

std::optional<std::string> duplicate_json_key(std::string_view text) {
    boost::json::parse_options options;
    options.max_depth = 64;
    boost::system::error_code ec;
    boost::json::basic_parser<hash_scan> scan(options);
    scan.write_some(false, text.data(), text.size(), ec);
    auto const suspect = scan.handler().suspect;
    if (!suspect)
        return std::nullopt;
    boost::json::basic_parser<key_finder> find(options);
    find.handler().ordinal = suspect->first;
    find.handler().hash = suspect->second;
    ec = {};
    find.write_some(false, text.data(), text.size(), ec);
    return find.handler().duplicate;
}

} // namespace mirror::fdl::detail
