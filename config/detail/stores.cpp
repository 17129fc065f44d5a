// The `stores` list: how to reach the S3 and HTTP stores whose locations start with a
// prefix. Secrets are never read from here, only the name of a file that holds them.
#include "config/detail/schema.hpp"

#include "config/detail/locations.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace mirror::config::detail {

namespace {

// S3's multipart limits (Amazon S3 User Guide, "Amazon S3 multipart upload limits"): a
// part is 5MiB to 5GiB but the last; a single PUT is at most 5GiB.
constexpr std::uint64_t min_part_size = 5 * mebibyte;
constexpr std::uint64_t max_part_size = std::uint64_t{5} << 30;

// Keys that would hold a secret. Each is refused with a pointer to credentials_file, so
// that a secret pasted in by mistake is not silently ignored (nor ever shown).
constexpr std::array<std::string_view, 8> secret_keys{
    "access_key_id",         "secret_access_key", "session_token", "aws_access_key_id",
    "aws_secret_access_key", "aws_session_token", "password",      "secret"};

// Keys that mean something for S3 stores only.
constexpr std::array<std::string_view, 7> s3_only_keys{
    "endpoint", "region", "profile", "addressing", "credentials_file", "part_size", "multipart_threshold"};

bool is_plain_word(std::string_view text, bool spaces_allowed) {
    return !text.empty() && text.size() <= 128 && std::all_of(text.begin(), text.end(), [&](char c) {
        auto const byte = static_cast<unsigned char>(c);
        return byte > 0x20 ? byte != 0x7f && c != '[' && c != ']' : spaces_allowed && c == ' ';
    });
}

std::string describe(std::size_t index, YAML::Node const& item) {
    if (auto match = item["match"]; match && match.IsScalar() && !match.Scalar().empty())
        return "store " + quote(shown_location(match.Scalar()));
    return "store #" + std::to_string(index + 1);
}

std::optional<std::string> read_word(map_reader& store, std::string_view key, bool spaces_allowed) {
    auto found = store.scalar(key, "a string");
    if (!found)
        return std::nullopt;
    if (!is_plain_word(found->first, spaces_allowed)) {
        store.problems().add(found->second, store.subject(key) + " " + quote(found->first) +
                                                " is empty, too long, or holds brackets or control characters");
        return std::nullopt;
    }
    return std::move(found->first);
}

store_entry read_store(map_reader& store, std::filesystem::path const& base) {
    auto& problems = store.problems();
    store_entry out;
    if (store.require("match")) {
        if (auto found = store.scalar("match", "a URL prefix such as s3://bucket/")) {
            auto checked = resolve_location(found->first, location_role::store_match, base);
            if (checked.value)
                out.match = *checked.value;
            else
                problems.add(found->second, store.subject("match") + " " + quote(shown_location(found->first)) + " " + checked.why);
        }
    }
    out.allow_plain_http = store.flag("allow_plain_http").value_or(false);
    if (auto found = store.scalar("endpoint", "a URL such as https://host:9000")) {
        auto checked = check_endpoint(found->first, out.allow_plain_http);
        if (checked.value)
            out.endpoint = *checked.value;
        else
            problems.add(found->second, store.subject("endpoint") + " " + quote(shown_location(found->first)) + " " + checked.why);
    }
    out.region = read_word(store, "region", false);
    out.profile = read_word(store, "profile", true);
    out.addressing = store.word<s3_addressing>("addressing", {{"path", s3_addressing::path},
                                                              {"virtual", s3_addressing::virtual_hosted},
                                                              {"auto", s3_addressing::automatic}});
    out.credentials_file = read_path(store, "credentials_file", base);
    out.ca_bundle = read_path(store, "ca_bundle", base);
    out.max_requests_per_second = store.count("max_requests_per_second", 1'000'000);
    out.max_bytes_per_second = store.size("max_bytes_per_second", 1, std::numeric_limits<std::uint64_t>::max());
    out.part_size = store.size("part_size", min_part_size, max_part_size).value_or(out.part_size);
    out.multipart_threshold = store.size("multipart_threshold", 1, max_part_size).value_or(out.multipart_threshold);
    for (auto const& item : store.list("redirect_hosts")) {
        std::string const host = item.IsScalar() ? item.Scalar() : std::string();
        if (!is_plain_word(host, false) || host.find_first_of("/@?#") != std::string::npos)
            problems.add(item.Mark(), store.subject("redirect_hosts") + " item " + quote(host) +
                                          " is not a host or host:port (such as cdn.example.org or cdn.example.org:8443)");
        else
            out.redirect_hosts.push_back(host);
    }

    for (auto key : secret_keys)
        if (store.find(key))
            problems.add(store.key_mark(key), store.subject(key) + " is not read from the configuration: put " +
                                                  "secrets in the file credentials_file names");
    if (!out.match.empty() && scheme_of(out.match) != "s3")
        for (auto key : s3_only_keys)
            if (store.find(key))
                problems.add(store.key_mark(key), store.subject(key) + " applies only to s3:// stores");
    if (!out.match.empty() && scheme_of(out.match) == "s3" && store.find("redirect_hosts"))
        problems.add(store.key_mark("redirect_hosts"),
                     store.subject("redirect_hosts") + " applies only to http:// and https:// stores");
    store.finish();
    return out;
}

} // namespace

store_entry const* longest_match(std::vector<store_entry> const& stores, std::string_view location) noexcept {
    store_entry const* best = nullptr;
    for (auto const& entry : stores)
        if (prefix_matches(entry.match, location) && (best == nullptr || entry.match.size() > best->match.size()))
            best = &entry;
    return best;
}

std::vector<store_entry> read_stores(map_reader& top, std::filesystem::path const& base) {
    auto& problems = top.problems();
    std::vector<store_entry> out;
    std::vector<int> lines; // of each entry's match, for "listed twice" messages
    auto const items = top.list("stores");
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto const& item = items[i];
        if (!item.IsMap()) {
            problems.add(item.Mark(),
                         "store #" + std::to_string(i + 1) + " must be a mapping, not " + std::string(kind_of(item)));
            continue;
        }
        map_reader store(item, describe(i, item), problems);
        auto entry = read_store(store, base);
        int const line = item["match"] ? item["match"].Mark().line + 1 : 0;
        for (std::size_t j = 0; j < out.size() && !entry.match.empty(); ++j)
            if (location_key(out[j].match) == location_key(entry.match))
                problems.add(item["match"].Mark(), "store " + quote(entry.match) + " is listed twice (first at line " +
                                                       std::to_string(lines[j]) + ")");
        out.push_back(std::move(entry));
        lines.push_back(line);
    }
    return out;
}

} // namespace mirror::config::detail
