#include "core/coord/pause.hpp"

#include "core/io/errors.hpp"
#include "core/io/text.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>

namespace mirror::coord {

namespace json = boost::json;

namespace {

constexpr std::size_t max_pause_bytes = 64 * 1024; // a name and a sentence: more is not ours

/// At most 300 bytes of `text`, cut between characters, valid UTF-8 and printable: the
/// reason is shown on terminals, in logs and in JSON that strict readers parse.
std::string printable(std::string_view text) {
    std::string const valid = io::valid_utf8(text.substr(0, 1200));
    std::string out;
    for (char c : io::utf8_prefix(valid, 300))
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    return out;
}

} // namespace

std::string render_pause(pause_record const& record) {
    // The operator's words may be any bytes (an argument of `fdl-mirror pause`): what is
    // written is what parse_pause will show, never text a strict JSON reader refuses.
    json::object o{{"paused_since", record.since}, {"by", printable(record.by)}, {"reason", printable(record.reason)}};
    return json::serialize(o) + "\n";
}

pause_record parse_pause(std::string_view text) {
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    auto const* o = !ec ? value.if_object() : nullptr;
    if (o == nullptr)
        return {0, "", "the pause object does not parse as a JSON object"};
    pause_record out;
    if (auto const* since = o->if_contains("paused_since"); since != nullptr && since->is_number()) {
        double const seconds = since->to_number<double>(ec);
        if (!ec && std::isfinite(seconds))
            out.since = seconds;
    }
    if (auto const* by = o->if_contains("by"); by != nullptr && by->is_string())
        out.by = printable(by->get_string());
    if (auto const* reason = o->if_contains("reason"); reason != nullptr && reason->is_string())
        out.reason = printable(reason->get_string());
    return out;
}

awaitable<result<std::optional<pause_record>>> read_pause(store::store& mirror) {
    auto bytes = co_await store::read_if_present(mirror, std::string(pause_key), max_pause_bytes);
    if (!bytes) {
        if (bytes.error().code == io::store_errc::too_large) // still there: still paused
            co_return std::optional<pause_record>(pause_record{0, "", "the pause object is larger than 64 KiB"});
        co_return bytes.error();
    }
    if (!*bytes)
        co_return std::optional<pause_record>();
    co_return std::optional<pause_record>(parse_pause(**bytes));
}

} // namespace mirror::coord
