#pragma once
// Planning one version's copy: pure, no I/O. The order of the steps is the publication
// rule of the spec README: data files (and the mirror's ledger of them), then catalog, dataset.json, files.json,
// catalogs/<format>.duckdb, other files, version.json.sig, expired.json, and
// version.json last.

#include "core/fdl/files_index.hpp"
#include "core/fdl/version_record.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/inventory.hpp"

#include <map>
#include <string>
#include <vector>

namespace mirror::sync {

enum class step_kind {
    data_file,    ///< under data_dir, create-only, size pinned by the index
    ledger,       ///< the mirror's record of the version's data files (size, sha256)
    version_file, ///< inside the version folder; replaceable until the version is published
    record,       ///< version.json, create-only, always the last step
};

struct copy_step {
    std::string key;
    step_kind kind = step_kind::version_file;
    expectation expect;
    bool optional = false; ///< absent at the origin is fine (probed, not listed)
};

/// What is known of a version when its copy is planned.
struct version_inputs {
    std::string id;
    std::string data_dir;                        ///< from fdl.json, ends in '/'
    fdl::version_record const* record = nullptr; ///< parsed and checked
    std::vector<fdl::needed_data_file> data_files;
    folder_files const* origin_files = nullptr;  ///< the origin's listing of the folder, if it can list
    std::vector<std::string> catalog_formats;    ///< from fdl.json: probed when there is no listing
    bool expired = false;                        ///< expired.json is at the origin
    std::string data_files_pinned_by = "files.json"; ///< who gives their sizes, for messages
};

/// The ordered steps, and data files the mirror holds with another size (which block the
/// version: the mirror never overwrites a data file).
struct version_plan {
    std::vector<copy_step> steps;
    std::vector<error> conflicts;
    std::vector<fdl::needed_data_file> data_files; ///< every data file the version needs (for the ledger)
};

/// Plans the copy of one version into a mirror that holds `mirror_data` (data files,
/// path relative to data_dir -> size). Data files already there with the right size are
/// not copied again.
version_plan plan_version(version_inputs const& in, path_sizes const& mirror_data);

} // namespace mirror::sync
