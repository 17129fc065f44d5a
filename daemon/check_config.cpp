#include "daemon/check_config.hpp"

#include "daemon/terminal_text.hpp"
#include "verify/allowed_signers.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <variant>

namespace mirror::daemon {

namespace {

/// The file's bytes, or why it cannot be read.
std::variant<std::string, std::string> read_text_file(std::filesystem::path const& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return std::variant<std::string, std::string>(std::in_place_index<1>, "does not exist");
    if (!std::filesystem::is_regular_file(path, ec))
        return std::variant<std::string, std::string>(std::in_place_index<1>, "is not a file");
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.is_open() || in.bad())
        return std::variant<std::string, std::string>(std::in_place_index<1>, "cannot be read");
    return std::variant<std::string, std::string>(std::in_place_index<0>, std::move(text));
}

} // namespace

std::vector<std::string> check_named_files(config::daemon_config const& cfg, std::vector<std::string>* warnings) {
    std::vector<std::string> problems;
    std::set<std::filesystem::path> signers_checked;
    for (auto const& repo : cfg.repositories) {
        auto const& file = repo.settings.allowed_signers;
        if (!file || !signers_checked.insert(*file).second)
            continue;
        auto text = read_text_file(*file);
        std::string where = "repository '" + repo.name + "': allowed_signers: " + file->string() + ": ";
        if (text.index() == 1) {
            problems.push_back(where + std::get<1>(text));
            continue;
        }
        auto parsed = verify::parse_allowed_signers(std::get<0>(text), file->string());
        if (!parsed)
            problems.push_back("repository '" + repo.name + "': allowed_signers: " + parsed.error().message);
        else if (warnings != nullptr)
            for (auto const& skipped : parsed->skipped)
                warnings->push_back("repository '" + repo.name + "': " + verify::skipped_line_warning(skipped));
    }
    for (auto const& entry : cfg.stores) {
        for (auto const& [key, file] : {std::pair{"credentials_file", entry.credentials_file},
                                        std::pair{"ca_bundle", entry.ca_bundle}}) {
            if (!file)
                continue;
            auto text = read_text_file(*file);
            if (text.index() == 1)
                problems.push_back("store '" + entry.match + "': " + key + ": " + file->string() + ": " +
                                   std::get<1>(text));
        }
    }
    return problems;
}

int run_check_config(std::string const& path) {
    auto loaded = config::load_config(path);
    if (!loaded) {
        for (auto const& problem : loaded.error())
            std::fprintf(stderr, "%s\n", problem.text().c_str());
        std::fprintf(stderr, "fdl-mirror: %s: %zu problem%s\n", path.c_str(), loaded.error().size(),
                     loaded.error().size() == 1 ? "" : "s");
        return exit_config;
    }
    std::vector<std::string> warnings;
    auto problems = check_named_files(*loaded, &warnings);
    for (auto const& warning : warnings)
        std::fprintf(stderr, "warning: %s\n", terminal_safe(warning, false).c_str());
    if (!problems.empty()) {
        for (auto const& problem : problems)
            std::fprintf(stderr, "%s: %s\n", path.c_str(), problem.c_str());
        std::fprintf(stderr, "fdl-mirror: %s: %zu problem%s\n", path.c_str(), problems.size(),
                     problems.size() == 1 ? "" : "s");
        return exit_config;
    }
    std::string names;
    for (auto const& repo : loaded->repositories)
        names += (names.empty() ? "" : ", ") + repo.name;
    std::printf("%s: valid; %zu repositor%s (%s); listening on %s; state in %s\n", path.c_str(),
                loaded->repositories.size(), loaded->repositories.size() == 1 ? "y" : "ies", names.c_str(),
                config::to_string(loaded->listen).c_str(), loaded->state_dir.c_str());
    return 0;
}

} // namespace mirror::daemon
