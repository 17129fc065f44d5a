#include "config/event_secrets.hpp"

#include "config/detail/yaml_documents.hpp"
#include "config/detail/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <sys/stat.h>

#include <cctype>
#include <cstdio>

namespace mirror::config {

namespace {

using detail::map_reader;
using detail::problem_list;

constexpr std::size_t min_secret_bytes = 16;
constexpr std::uintmax_t max_secrets_file_size = 1024 * 1024;

bool url_safe(std::string_view token) {
    for (char c : token)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '~' || c == '-'))
            return false;
    return true;
}

} // namespace

event_secrets_result parse_event_secrets(std::string_view text, std::string_view file_name) {
    problem_list problems{std::string(file_name)};
    auto root = detail::load_root(std::string(text), "the events' secrets file",
                                  "the events' secrets file is empty: it needs webhooks or s3_token", problems);
    if (!root)
        return problems.take();
    event_secrets out;
    try {
        map_reader top(*root, "", problems);
        if (auto hooks = top.mapping("webhooks")) {
            for (auto const& entry : *hooks) {
                auto const name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
                if (name.empty() || !entry.second.IsScalar()) {
                    problems.add(entry.first.Mark(), "webhooks: each entry is a repository name and its secret");
                    continue;
                }
                auto const& secret = entry.second.Scalar();
                if (secret.size() < min_secret_bytes)
                    problems.add(entry.second.Mark(), "webhooks: " + detail::quote(name) +
                                                          ": the secret is shorter than 16 bytes (not shown)");
                else
                    out.webhooks.emplace(name, secret);
            }
        }
        if (auto found = top.scalar("s3_token", "a token of letters, digits and . _ ~ -")) {
            if (found->first.size() < min_secret_bytes || !url_safe(found->first))
                problems.add(found->second, "s3_token: must be 16 or more letters, digits and . _ ~ - (it is "
                                            "written in the notification endpoint's URL; not shown)");
            else
                out.s3_token = found->first;
        }
        top.finish();
    } catch (YAML::Exception const& e) {
        problems.add(e.mark, "cannot read this node: " + e.msg);
    }
    if (!problems.empty())
        return problems.take();
    return out;
}

event_secrets_result load_event_secrets(std::filesystem::path const& path) {
    problem_list problems{path.string()};
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && (info.st_mode & S_IRWXO) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(info.st_mode & 0777));
        problems.add_whole_file(std::string("others may read or write it (mode ") + mode +
                                "): make it readable by the daemon's user and group only (chmod 640)");
        return problems.take();
    }
    auto const text = detail::read_config_file(path, max_secrets_file_size, "the events' secrets file", problems);
    if (!text)
        return problems.take();
    return parse_event_secrets(*text, path.string());
}

} // namespace mirror::config
