// The `repositories` list: each repository's keys, its settings over `defaults`, and the
// checks between repositories (names, mirrors) and against the stores (plain http).
#include "config/detail/schema.hpp"

#include "config/detail/locations.hpp"

#include <algorithm>

namespace mirror::config::detail {

namespace {

/// [A-Za-z0-9][A-Za-z0-9._-]{0,63}: a name is a metric label value and a folder name
/// under state_dir, so it has no '/', no leading '.', and a bounded length.
bool is_valid_name(std::string_view name) {
    auto const alnum = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    };
    return !name.empty() && name.size() <= 64 && alnum(name.front()) &&
           std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

/// Where a repository's places are, for the checks made once every repository is read.
struct repository_marks {
    YAML::Mark name;
    YAML::Mark origin;
    YAML::Mark mirror;
};

std::string describe(std::size_t index, YAML::Node const& item) {
    // The name as written, even a bad one, finds the repository best; else its position.
    if (auto name = item["name"]; name && name.IsScalar() && !name.Scalar().empty())
        return "repository " + quote(name.Scalar());
    return "repository #" + std::to_string(index + 1);
}

std::optional<std::string> read_location(map_reader& repo, std::string_view key, location_role role,
                                         std::filesystem::path const& base) {
    if (!repo.require(key))
        return std::nullopt;
    auto found = repo.scalar(key, "a location");
    if (!found)
        return std::nullopt;
    auto location = resolve_location(found->first, role, base);
    if (!location.value)
        repo.problems().add(found->second, repo.subject(key) + " " + quote(shown_location(found->first)) + " " + location.why);
    return location.value;
}

/// Required and if-present both check signatures against the trusted keys, so both need
/// them (as the command line's --signatures does); say where the policy came from.
void check_signers(map_reader& repo, partial_settings const& own, partial_settings const& from_defaults,
                   repository_settings const& resolved) {
    if (resolved.signatures == signature_policy::off || resolved.allowed_signers || own.signature_keys_refused ||
        from_defaults.signature_keys_refused)
        return;
    std::string const source = own.signatures ? "" : from_defaults.signatures ? " (from defaults)" : " (the default)";
    repo.problems().add(own.signatures ? repo.key_mark("signatures") : repo.mark(),
                        repo.subject("signatures") + " '" + std::string(to_string(resolved.signatures)) + "'" + source +
                            " needs allowed_signers (or signatures: off)");
}

} // namespace

std::vector<repository_config> read_repositories(map_reader& top, defaults_section const& defaults,
                                                 std::vector<store_entry> const& stores,
                                                 std::filesystem::path const& base) {
    auto& problems = top.problems();
    if (top.require("repositories")) {
        auto const node = *top.find("repositories");
        if (node.IsNull() || (node.IsSequence() && node.size() == 0))
            problems.add(top.key_mark("repositories"), "repositories is empty: list at least one repository");
    }
    auto const items = top.list("repositories");

    std::vector<repository_config> out;
    std::vector<repository_marks> marks;
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto const& item = items[i];
        if (!item.IsMap()) {
            problems.add(item.Mark(), "repository #" + std::to_string(i + 1) + " must be a mapping, not " +
                                          std::string(kind_of(item)));
            continue;
        }
        map_reader repo(item, describe(i, item), problems);
        repository_config entry;
        if (repo.require("name")) {
            if (auto name = repo.text("name")) {
                entry.name = *name;
                if (!is_valid_name(*name))
                    problems.add(
                        item["name"].Mark(),
                        "repository name " + quote(*name) +
                            " must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
            }
        }
        entry.origin = read_location(repo, "origin", location_role::origin, base).value_or("");
        entry.mirror = read_location(repo, "mirror", location_role::mirror, base).value_or("");
        for (auto const& peer : repo.list("peers")) {
            if (!peer.IsScalar() || peer.Scalar().empty()) {
                problems.add(peer.Mark(), repo.subject("peers") + ": each peer is a location");
                continue;
            }
            auto location = resolve_location(peer.Scalar(), location_role::origin, base);
            if (!location.value)
                problems.add(peer.Mark(), repo.subject("peers") + " " + quote(shown_location(peer.Scalar())) + " " +
                                              location.why);
            else if (location_key(*location.value) == location_key(entry.mirror))
                problems.add(peer.Mark(), repo.subject("peers") + " " + quote(*location.value) +
                                              " is this repository's own mirror");
            else
                entry.peers.push_back(*location.value);
        }
        if (auto refs = repo.mapping("refs")) {
            map_reader patterns(*refs, repo.subject("refs"), problems);
            for (auto [key, out] : {std::pair{"include", &entry.include_refs}, std::pair{"exclude", &entry.exclude_refs}})
                for (auto const& item : patterns.list(key)) {
                    if (item.IsScalar() && !item.Scalar().empty())
                        out->push_back(item.Scalar());
                    else
                        problems.add(item.Mark(), patterns.subject(key) + ": each is a pattern such as refs/tags/v*");
                }
            patterns.finish();
        }
        entry.head = repo.text("head");
        entry.depth = repo.count("depth", 1'000'000);
        for (auto const& source : repo.list("events")) {
            std::string const word = source.IsScalar() ? source.Scalar() : std::string();
            if (word == "webhook")
                entry.events.webhook = true;
            else if (word == "s3" && entry.origin.starts_with("s3://"))
                entry.events.s3 = true;
            else if (word == "s3")
                problems.add(source.Mark(), repo.subject("events") + ": s3 needs an s3:// origin (its bucket's "
                                                                     "notifications announce the changes)");
            else
                problems.add(source.Mark(), repo.subject("events") + ": each is webhook or s3");
        }
        auto own = read_partial_settings(repo, base);
        entry.settings = apply(own, defaults.resolved);
        check_signers(repo, own, defaults.own, entry.settings);
        repo.finish();
        if (!entry.origin.empty() && !entry.mirror.empty() && location_key(entry.origin) == location_key(entry.mirror))
            problems.add(item["mirror"].Mark(),
                         repo.subject("mirror") + " " + quote(entry.mirror) + " is the same location as its origin");
        marks.push_back({item["name"] ? item["name"].Mark() : item.Mark(),
                         item["origin"] ? item["origin"].Mark() : item.Mark(),
                         item["mirror"] ? item["mirror"].Mark() : item.Mark()});
        out.push_back(std::move(entry));
    }

    for (std::size_t i = 0; i < out.size(); ++i) {
        auto const& repo = out[i];
        for (std::size_t j = 0; j < i; ++j) {
            auto const& earlier = out[j];
            if (!repo.name.empty() && repo.name == earlier.name)
                problems.add(marks[i].name, "repository name " + quote(repo.name) + " is used twice (first at line " +
                                                std::to_string(marks[j].name.line + 1) + ")");
            if (repo.mirror.empty() || earlier.mirror.empty())
                continue;
            auto const mine = location_key(repo.mirror);
            auto const theirs = location_key(earlier.mirror);
            std::string const whose = "the mirror of repository " + quote(earlier.name) + " (line " +
                                      std::to_string(marks[j].mirror.line + 1) + ")";
            std::string const where = "repository " + quote(repo.name) + ": mirror " + quote(repo.mirror);
            if (mine == theirs)
                problems.add(marks[i].mirror, where + " is also " + whose);
            else if (mine.starts_with(theirs))
                problems.add(marks[i].mirror, where + " lies inside " + whose);
            else if (theirs.starts_with(mine))
                problems.add(marks[i].mirror, where + " holds " + whose);
        }
        // Core's stores refuse plain http unless the store entry allows it; saying so now
        // names the repository and its line.
        if (scheme_of(repo.origin) == "http") {
            auto const* store = longest_match(stores, repo.origin);
            if (store == nullptr || !store->allow_plain_http)
                problems.add(marks[i].origin, "repository " + quote(repo.name) + ": origin " + quote(repo.origin) +
                                                  " is plain http: add a stores entry matching it with "
                                                  "allow_plain_http: true");
        }
    }
    return out;
}

} // namespace mirror::config::detail
