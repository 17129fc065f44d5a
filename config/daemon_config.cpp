#include "config/daemon_config.hpp"

#include "config/detail/schema.hpp"
#include "config/detail/yaml_documents.hpp"
#include "config/detail/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <system_error>
#include <thread>

namespace mirror::config {

namespace {

// Far above any real configuration (one repository is a few hundred bytes); a bound so
// that a wrong path (a log, a device) is refused rather than read whole.
constexpr std::uintmax_t max_file_size = 4 * mebibyte;

std::filesystem::path absolute_or_as_is(std::filesystem::path const& path) {
    std::error_code ec;
    auto out = std::filesystem::absolute(path, ec);
    return (ec ? path : out).lexically_normal();
}

} // namespace

std::string_view to_string(log_format format) noexcept { return format == log_format::json ? "json" : "plain"; }

std::string_view to_string(log_level level) noexcept {
    switch (level) {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::notice: return "notice";
    case log_level::warning: return "warning";
    case log_level::error: return "error";
    }
    return "info";
}

std::string_view to_string(s3_addressing addressing) noexcept {
    switch (addressing) {
    case s3_addressing::path: return "path";
    case s3_addressing::virtual_hosted: return "virtual";
    case s3_addressing::automatic: return "auto";
    }
    return "auto";
}

std::string_view to_string(coordination_mode mode) noexcept {
    switch (mode) {
    case coordination_mode::automatic: return "auto";
    case coordination_mode::leases: return "leases";
    case coordination_mode::off: return "off";
    }
    return "auto";
}

load_result parse_config(std::string_view text, std::string_view file_name) {
    detail::problem_list problems{std::string(file_name)};
    std::filesystem::path const file = absolute_or_as_is(std::filesystem::path(std::string(file_name)));
    auto const root = detail::load_root(std::string(text), "the configuration",
                                        "the configuration is empty: it needs at least 'repositories'", problems);
    if (!root)
        return problems.take();
    daemon_config cfg;
    try {
        cfg = detail::read_daemon_config(*root, file.parent_path(), problems);
    } catch (YAML::Exception const& e) {
        // Not expected: the reader asks only what a node's type allows. Reported, not thrown.
        problems.add(e.mark, "cannot read this node: " + e.msg);
    }
    if (!problems.empty())
        return problems.take();
    cfg.file = file;
    return cfg;
}

std::filesystem::path state_dir_hint(std::filesystem::path const& path) {
    std::filesystem::path out = daemon_config{}.state_dir;
    std::error_code ec;
    auto const size = std::filesystem::file_size(path, ec);
    if (ec || size > max_file_size)
        return out;
    try {
        auto const top = YAML::LoadFile(path.string());
        if (top.IsMap() && top["state_dir"] && top["state_dir"].IsScalar()) {
            std::filesystem::path given = top["state_dir"].Scalar();
            if (!given.empty())
                out = given.is_absolute() ? given : std::filesystem::absolute(path).parent_path() / given;
        }
    } catch (YAML::Exception const&) {
        // Broken YAML: a top-level `state_dir: PATH` line is still what the author meant.
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);) {
            if (!line.starts_with("state_dir:"))
                continue;
            std::string value = line.substr(10);
            value = value.substr(0, value.find(" #"));
            auto const first = value.find_first_not_of(" \t\"'");
            auto const last = value.find_last_not_of(" \t\r\"'");
            if (first == std::string::npos)
                break;
            std::filesystem::path given = value.substr(first, last - first + 1);
            out = given.is_absolute() ? given : std::filesystem::absolute(path).parent_path() / given;
            break;
        }
    }
    return out;
}

load_result load_config(std::filesystem::path const& path) {
    detail::problem_list problems{path.string()};
    auto const text = detail::read_config_file(path, max_file_size, "a configuration", problems);
    if (!text)
        return problems.take();
    return parse_config(*text, path.string());
}

std::uint64_t default_duckdb_limit(std::uint64_t memory_limit, std::uint32_t readers) noexcept {
    return std::max<std::uint64_t>(memory_limit / 4 / std::max<std::uint32_t>(readers, 1), std::uint64_t{16} << 20);
}

std::uint64_t transfer_memory(std::uint64_t memory_limit, std::uint64_t duckdb) noexcept {
    return memory_limit > duckdb ? memory_limit - duckdb : memory_limit / 2;
}

std::uint64_t transfer_memory(daemon_config const& cfg) noexcept {
    return transfer_memory(cfg.memory_limit, cfg.catalogs.memory_limit * cfg.catalogs.readers);
}

std::uint64_t service_memory(daemon_config const& cfg) noexcept {
    constexpr std::uint64_t program = std::uint64_t{32} << 20;
    constexpr std::uint64_t reader_slack = std::uint64_t{1} << 30;
    return transfer_memory(cfg) + program + cfg.catalogs.readers * (cfg.catalogs.memory_limit + reader_slack);
}

std::size_t blocking_threads(daemon_config const& cfg) noexcept {
    if (cfg.threads != 0)
        return cfg.threads;
    return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, 8);
}

store_entry const* match_store(daemon_config const& cfg, std::string_view location) noexcept {
    return detail::longest_match(cfg.stores, location);
}

} // namespace mirror::config
