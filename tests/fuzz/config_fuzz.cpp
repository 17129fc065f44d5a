// libFuzzer target: the daemon's YAML configuration (config/daemon_config.hpp), through
// parse_config as check-config and the daemon read it (yaml-cpp, then our reader), and the
// web configuration's reader over the same text. Besides
// the sanitizers and escaping exceptions: a refusal lists problems in the order of their
// places, each one line naming the file; an accepted configuration keeps every limit that
// docs/configuration.md states.

#include "config/daemon_config.hpp"
#include "config/web_config.hpp"
#include "tests/fuzz/support/check.hpp"

#include <algorithm>
#include <set>

using namespace mirror::config;
using mirror::fuzz::check;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view file_name = "/etc/fdl-mirror/config.yaml";

void check_problems(config_problems const& problems) {
    check(!problems.empty(), "a refusal without a problem");
    for (std::size_t i = 0; i < problems.size(); ++i) {
        auto const& p = problems[i];
        check(p.file == file_name, "a problem that names another file", p.file);
        check(p.line >= 0 && p.column >= 0, "a problem at a negative place", p.message);
        check(!p.message.empty(), "an empty problem");
        check(p.message.find('\n') == std::string::npos, "a problem of more than one line", p.message);
        if (i > 0)
            check(std::pair(problems[i - 1].line, problems[i - 1].column) <= std::pair(p.line, p.column),
                  "problems out of the order of their places", p.message);
    }
}

bool is_valid_name(std::string const& name) {
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
    return !name.empty() && name.size() <= 64 && alnum(name.front()) &&
           std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

/// `resolved`: a repository's settings, where signatures need keys; `defaults` may leave
/// them to each repository.
void check_settings(repository_settings const& s, bool resolved) {
    check(s.interval >= 1s && s.pass_timeout >= 1s && s.backoff_max >= 1s, "a duration under 1s accepted");
    check(s.jitter >= 0 && s.jitter <= 1, "a jitter outside 0%..100% accepted");
    check(s.concurrency >= 1 && s.concurrency <= 1024, "a concurrency outside 1..1024 accepted");
    check(!s.allowed_signers || s.allowed_signers->is_absolute(), "a relative allowed_signers accepted");
    if (resolved)
        check(s.allowed_signers || s.signatures == signature_policy::off,
              "a repository whose signatures are checked without allowed_signers");
}

void check_config(daemon_config const& cfg) {
    check(cfg.file.is_absolute(), "the configuration's own path is not absolute");
    check(!cfg.repositories.empty(), "a configuration without repositories accepted");
    check(cfg.max_transfers >= 1 && cfg.max_transfers <= 65536, "max_transfers outside 1..65536 accepted");
    check(!cfg.catalogs.scratch_dir || cfg.catalogs.scratch_dir->is_absolute(), "a relative scratch_dir accepted");
    check_settings(cfg.defaults, false);
    std::set<std::string> names;
    for (auto const& repo : cfg.repositories) {
        check(is_valid_name(repo.name), "an invalid repository name accepted", repo.name);
        check(names.insert(repo.name).second, "a repository name used twice accepted", repo.name);
        check(!repo.origin.empty() && !repo.mirror.empty(), "a repository without origin or mirror accepted");
        check_settings(repo.settings, true);
    }
    for (auto const& store : cfg.stores) {
        check(!store.match.empty(), "a store entry without match accepted");
        check(store.part_size >= 5 * mebibyte && store.part_size <= 5120 * mebibyte, "a part_size outside 5MiB..5GiB");
        check(store.multipart_threshold >= 1 && store.multipart_threshold <= 5120 * mebibyte,
              "a multipart_threshold outside 1..5GiB");
        check(!store.credentials_file || store.credentials_file->is_absolute(), "a relative credentials_file");
        check(!store.ca_bundle || store.ca_bundle->is_absolute(), "a relative ca_bundle");
        // Every store entry matches its own prefix (longest match, at a '/' boundary).
        check(match_store(cfg, store.match) != nullptr, "a store entry that matches nothing", store.match);
    }
}

} // namespace

/// The same text as a web configuration (config/web_config.hpp), whose reader shares the
/// YAML walk: a refusal keeps the same rules, and a secret never reaches a problem.
void check_web_config(std::string_view text) {
    auto web = parse_web_config(text, file_name);
    if (!web) {
        check_problems(web.error());
        return;
    }
    for (auto const& [user, hash] : web->users)
        check(hash.size() == 60 && hash.starts_with("$2"), "a basic_auth_users value taken that is no bcrypt hash", user);
    if (web->tls) {
        check(web->tls->cert_file.has_value() != !web->tls->cert_pem.empty(), "TLS without exactly one certificate");
        check(web->tls->min_version <= web->tls->max_version, "TLS versions upside down");
    }
}

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto const text = mirror::fuzz::as_text(data, size);
    auto loaded = parse_config(text, file_name);
    if (loaded)
        check_config(*loaded);
    else
        check_problems(loaded.error());
    check_web_config(text);
    return 0;
}
