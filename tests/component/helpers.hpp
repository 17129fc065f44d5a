#pragma once
// Helpers shared by the component tests.

#include "core/sync/errors.hpp"
#include "core/sync/report.hpp"
#include "tests/support/publisher.hpp"
#include "verify/sha256.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace mirror::test {

/// True when the report holds `id` for `why`.
inline bool held_for(sync::sync_report const& r, std::string const& id, sync::sync_errc why) {
    return std::any_of(r.held.begin(), r.held.end(),
                       [&](auto const& h) { return h.id == id && h.why.code == why; });
}

/// True when the report has a violation of kind `why` whose message mentions `text`.
inline bool violated(sync::sync_report const& r, sync::sync_errc why, std::string const& text) {
    return std::any_of(r.violations.begin(), r.violations.end(), [&](auto const& v) {
        return v.code == why && v.message.find(text) != std::string::npos;
    });
}

/// The content of a ref file without its newline, or "" when absent.
inline std::string ref_of(std::filesystem::path const& root, std::string const& name) {
    if (!std::filesystem::exists(root / name))
        return "";
    std::string id = read_file(root / name);
    if (id.ends_with('\n'))
        id.pop_back();
    return id;
}

/// Rewrites a file of a version and re-pins it in version.json (as a careless or hostile
/// writer would), so that only the content under test is wrong.
inline void repin(publisher const& p, std::string const& id, std::string const& field, std::string const& bytes) {
    auto dir = p.version_dir(id);
    auto record = boost::json::parse(read_file(dir / "version.json")).as_object();
    auto& pinned = record[field].as_object();
    write_file(dir / std::string(pinned["path"].as_string()), bytes);
    pinned["bytes"] = bytes.size();
    pinned["sha256"] = verify::to_hex(verify::sha256_of(bytes));
    write_file(dir / "version.json", boost::json::serialize(record) + "\n");
}

/// A repository of `count` data files ("main/t/part-NN.parquet", each of its own size) in
/// two versions: the root (tagged v1) needs the first half, its child (main's tip) all of
/// them. Returns the paths, in name order.
inline std::vector<std::string> publish_many_files(publisher& p, int count) {
    std::vector<std::string> paths;
    for (int i = 0; i < count; ++i) {
        paths.push_back("main/t/part-" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ".parquet");
        p.add_data_file(paths.back(), std::string(100 + 10 * i, static_cast<char>('a' + i % 26)));
    }
    version_options root;
    root.data_files.assign(paths.begin(), paths.begin() + count / 2);
    auto first = p.add_version(root);
    version_options tip;
    tip.parent = first;
    tip.data_files = paths;
    p.set_branch("main", p.add_version(tip));
    p.set_tag("v1", first);
    p.set_head("main");
    p.write_refs_json();
    return paths;
}

/// Changes one byte of a file in place, keeping its size (a mirror's files are read-only).
inline void flip_byte(std::filesystem::path const& file) {
    auto bytes = read_file(file);
    bytes[bytes.size() / 2] ^= 1;
    std::filesystem::permissions(file, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    write_file(file, bytes);
}

/// Every file under `root`, relative, sorted.
inline std::vector<std::string> files_under(std::filesystem::path const& root) {
    std::vector<std::string> out;
    if (std::filesystem::exists(root))
        for (auto const& e : std::filesystem::recursive_directory_iterator(root))
            if (e.is_regular_file())
                out.push_back(std::filesystem::relative(e.path(), root).generic_string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace mirror::test
