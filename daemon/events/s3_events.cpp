#include "daemon/events/s3_events.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

constexpr std::size_t max_records = 1000;

std::optional<std::string> text_at(json::object const* o, std::string_view key) {
    if (o == nullptr)
        return std::nullopt;
    auto const* v = o->if_contains(key);
    if (v == nullptr || !v->is_string())
        return std::nullopt;
    return std::string(v->get_string());
}

json::object const* object_at(json::object const* o, std::string_view key) {
    if (o == nullptr)
        return nullptr;
    auto const* v = o->if_contains(key);
    return v ? v->if_object() : nullptr;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/// AWS's keys: form-URL-encoded ('+' a space, %XX a byte). A bad escape stays as written.
std::string form_decoded(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '+') {
            out += ' ';
        } else if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
                   hex_value(text[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

} // namespace

std::optional<std::vector<s3_event_record>> parse_s3_events(std::string_view body, std::string& why) {
    boost::system::error_code ec;
    auto value = json::parse(body, ec);
    if (ec) {
        why = "not JSON (" + ec.message() + ")";
        return std::nullopt;
    }
    auto const* top = value.if_object();
    if (top == nullptr) {
        why = "not a JSON object";
        return std::nullopt;
    }
    std::vector<s3_event_record> out;
    auto const* records = top->if_contains("Records");
    if (records == nullptr)
        return out; // AWS's s3:TestEvent, and other messages without records
    if (!records->is_array()) {
        why = "Records: not a list";
        return std::nullopt;
    }
    if (records->get_array().size() > max_records) {
        why = "Records: more than " + std::to_string(max_records);
        return std::nullopt;
    }
    for (auto const& item : records->get_array()) {
        auto const* record = item.if_object();
        auto const* s3 = object_at(record, "s3");
        auto name = text_at(record, "eventName");
        auto bucket = text_at(object_at(s3, "bucket"), "name");
        auto key = text_at(object_at(s3, "object"), "key");
        if (!name || !bucket || !key) {
            why = "a record without eventName, s3.bucket.name or s3.object.key";
            return std::nullopt;
        }
        bool const from_aws = text_at(record, "eventSource") == std::optional<std::string>("aws:s3");
        out.push_back({std::move(*name), std::move(*bucket), from_aws ? form_decoded(*key) : std::move(*key)});
    }
    return out;
}

bool announces_change(std::string_view key) {
    if (key == "HEAD" || key == "refs.json" || (key.starts_with("refs/") && key.size() > 5))
        return true;
    if (!key.starts_with("versions/"))
        return false;
    auto rest = key.substr(9);
    auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0)
        return false;
    auto file = rest.substr(slash + 1);
    return file == "version.json.sig" || file == "expired.json";
}

std::optional<s3_origin> s3_origin_of(std::string const& repository, std::string_view location) {
    if (!location.starts_with("s3://"))
        return std::nullopt;
    auto rest = location.substr(5);
    auto slash = rest.find('/');
    s3_origin out{repository, std::string(rest.substr(0, slash)), ""};
    if (slash != std::string_view::npos) {
        out.prefix = std::string(rest.substr(slash + 1));
        if (!out.prefix.empty() && !out.prefix.ends_with('/'))
            out.prefix += '/';
    }
    if (out.bucket.empty())
        return std::nullopt;
    return out;
}

std::vector<std::string> repositories_announced(std::vector<s3_event_record> const& records,
                                                std::vector<s3_origin> const& origins, std::size_t& ignored) {
    std::vector<bool> announced(origins.size(), false);
    ignored = 0;
    for (auto const& record : records) {
        bool any = false;
        for (std::size_t i = 0; i < origins.size(); ++i) {
            auto const& origin = origins[i];
            if (record.bucket != origin.bucket || !record.key.starts_with(origin.prefix))
                continue;
            if (announces_change(std::string_view(record.key).substr(origin.prefix.size()))) {
                announced[i] = true;
                any = true;
            }
        }
        ignored += any ? 0 : 1;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < origins.size(); ++i)
        if (announced[i] && std::find(out.begin(), out.end(), origins[i].repository) == out.end())
            out.push_back(origins[i].repository);
    return out;
}

} // namespace mirror::daemon
