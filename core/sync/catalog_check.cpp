#include "core/sync/catalog_check.hpp"

#include "core/catalog/compare.hpp"
#include "core/catalog/errors.hpp"
#include "core/io/errors.hpp"
#include "core/store/local_store.hpp"
#include "core/sync/errors.hpp"

#include <cstdlib>
#include <functional>

namespace mirror::sync {

scratch_space::scratch_space(catalog_settings const& settings, io::blocking_pool* pool)
    : parent_(settings.scratch_parent), pool_(pool), readers_(settings.readers) {}

scratch_space::~scratch_space() {
    store_.reset();
    if (!root_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
}

result<store::store*> scratch_space::files() {
    if (store_)
        return store_.get();
    if (!readers_)
        readers_ = std::make_shared<catalog_readers>(parent_, 1);
    auto folder = readers_->make_folder();
    if (!folder)
        return folder.error();
    root_ = std::move(*folder);
    auto opened = store::local_store::open(root_, true, pool_);
    if (!opened)
        return opened.error();
    store_ = std::move(*opened);
    return store_.get();
}

std::filesystem::path scratch_space::path_of(std::string const& key) const { return root_ / key; }

void scratch_space::forget(std::string const& folder) {
    if (root_.empty())
        return;
    std::error_code ignored;
    std::filesystem::remove_all(root_ / folder, ignored);
}

awaitable<result<catalog::catalog_contents>> scratch_space::read_catalog(std::string key,
                                                                        catalog::read_options options) {
    if (root_.empty())
        co_return make_error(io::store_errc::not_found, key + ": no catalog copies made yet");
    std::filesystem::path file = path_of(key);
    auto read = co_await readers_->read(file, key, options);
    co_return read;
}

std::optional<std::string> declared_format(std::string_view path) {
    constexpr std::string_view prefix = "catalogs/", suffix = ".duckdb";
    if (!path.starts_with(prefix) || !path.ends_with(suffix) || path.size() <= prefix.size() + suffix.size())
        return std::nullopt;
    auto format = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    if (format.find('/') != std::string_view::npos)
        return std::nullopt;
    return std::string(format);
}

error first_of(std::vector<error> const& problems) {
    error first = problems.front();
    if (problems.size() > 1)
        first.message += " (and " + std::to_string(problems.size() - 1) +
                         (problems.size() == 2 ? " more problem)" : " more problems)");
    return first;
}

awaitable<result<catalog::catalog_contents>> fetch_catalog(store::store& from, std::string key, expectation expect,
                                                           std::vector<std::uint64_t> snapshots,
                                                           scratch_space& scratch, catalog_settings const& settings,
                                                           io::blocking_pool* pool, std::uint64_t max_memory) {
    if (!expect.bytes) {
        auto info = co_await from.stat(key);
        if (!info)
            co_return origin_read_error(info.error());
        expect.bytes = info->size;
    }
    if (*expect.bytes > settings.max_bytes)
        co_return make_error(catalog::catalog_errc::too_large,
                             key + ": a catalog of " + std::to_string(*expect.bytes) + " bytes, more than the " +
                                 std::to_string(settings.max_bytes) + " this mirror reads");
    auto files = scratch.files();
    if (!files) {
        scratch.note_failure();
        co_return with_context(files.error(), "catalog copies");
    }
    bool on_scratch = false;
    auto copied = co_await copy_object(from, **files, key, expect, store::write_mode::replace, on_scratch, nullptr, pool);
    if (!copied) {
        if (on_scratch)
            scratch.note_failure();
        co_return on_scratch ? with_context(copied.error(), "catalog copies") : copied.error();
    }
    // Off the I/O thread, so transfers go on meanwhile.
    catalog::read_options options{std::move(snapshots), settings.time_limit, settings.memory_limit};
    options.max_memory = max_memory;
    auto contents = co_await scratch.read_catalog(key, options);
    co_return contents;
}

awaitable<result<catalog_verdict>> check_version_catalogs(store::store& from, std::string folder,
                                                          fdl::version_record const& record,
                                                          fdl::files_index const* index,
                                                          std::vector<other_catalog> other_catalogs,
                                                          scratch_space& scratch, catalog_settings const& settings,
                                                          io::blocking_pool* pool, std::uint64_t max_memory) {
    catalog_verdict verdict;
    std::string key = folder + record.catalog->path;
    expectation pinned{record.catalog->bytes, record.catalog->sha256, "version.json"};
    std::vector<std::uint64_t> snapshots;
    if (record.ducklake)
        snapshots = record.ducklake->snapshots;
    auto main =
        co_await fetch_catalog(from, key, pinned, snapshots, scratch, settings, pool, max_memory);
    if (!main)
        co_return main.error();
    verdict.contents = std::move(*main);
    verdict.checked_copies.insert(key);
    auto& problems = verdict.problems;
    problems = verdict.contents.problems;
    auto append = [&](std::vector<error> more) {
        problems.insert(problems.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    };
    if (record.ducklake)
        append(catalog::check_against_record(verdict.contents, *record.ducklake, key));
    else
        problems.push_back(make_error(catalog::catalog_errc::snapshot_mismatch,
                                      folder + "version.json: ducklake: missing, so the catalog cannot be checked"));
    if (index != nullptr)
        append(catalog::compare_with_index(verdict.contents, *index, folder + record.files->path));
    for (auto const& [path, bytes] : other_catalogs) {
        auto format = declared_format(path);
        if (!format)
            continue;
        std::string other_key = folder + path;
        expectation unpinned{bytes, std::nullopt, "the listing"};
        std::vector<std::uint64_t> none;
        auto other = co_await fetch_catalog(from, other_key, unpinned, none, scratch, settings, pool, max_memory);
        if (!other) {
            if (scratch.failed())
                co_return other.error();
            if (other.error().code != sync_errc::missing_file)
                problems.push_back(other.error());
            continue;
        }
        verdict.checked_copies.insert(other_key);
        append(catalog::compare_catalogs(verdict.contents, *other, *format, other_key));
    }
    co_return verdict;
}

} // namespace mirror::sync
