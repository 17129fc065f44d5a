#pragma once
// Helpers shared by the catalog gate's component tests (built with DuckDB only): an origin
// with one honest root version, and questions about a pass's and an audit's findings.

#include "core/catalog/errors.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/report.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>

namespace mirror::test {

/// An origin with one honest root version on main; tests add a version on top.
struct lake_origin {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    std::filesystem::path mirror = tmp / "mirror";
    std::string root;

    lake_origin() {
        origin.add_data_file("main/orders/ducklake-1.parquet", std::string(1000, 'a'));
        origin.add_data_file("main/orders/ducklake-2.parquet", std::string(2000, 'b'));
        origin.add_data_file("main/towns/ducklake-3.parquet", std::string(300, 'c'));
        version_options v;
        v.data_files = {"main/orders/ducklake-1.parquet"};
        root = origin.add_version(v);
    }
    /// A version on top of the root with two tables, edited by `edit`, as main's tip.
    std::string add_tip(std::function<void(version_options&)> const& edit = {}) {
        version_options v;
        v.parent = root;
        v.data_files = {"main/orders/ducklake-1.parquet", "main/orders/ducklake-2.parquet",
                        "main/towns/ducklake-3.parquet"};
        if (edit)
            edit(v);
        auto id = origin.add_version(v);
        origin.set_branch("main", id);
        origin.set_head("main");
        origin.write_refs_json();
        return id;
    }
    sync::sync_report pass(sync::sync_options options = {}) { return sync_folders(tmp / "origin", mirror, options); }
};

inline bool held_because(sync::sync_report const& r, std::string const& id, catalog::catalog_errc why, std::string const& text) {
    return std::any_of(r.held.begin(), r.held.end(), [&](auto const& h) {
        return h.id == id && h.why.code == why && h.why.message.find(text) != std::string::npos;
    });
}

inline bool audit_finds(sync::audit_report const& r, std::string const& id, catalog::catalog_errc why, std::string const& text) {
    for (auto const& v : r.versions)
        if (v.id == id)
            for (auto const& p : v.problems)
                if (p.code == why && p.message.find(text) != std::string::npos)
                    return true;
    return false;
}

inline std::string problems_of(sync::audit_report const& r) {
    std::string out;
    for (auto const& v : r.versions)
        for (auto const& p : v.problems)
            out += v.id + ": " + p.message + "\n";
    return out;
}

} // namespace mirror::test
