#pragma once
// A test publisher: writes spec-conformant FDL repositories into a folder, as a writer
// would (version.json last), and the damaged or hostile variants tests need.
// Catalogs are real DuckLake catalogs written with DuckDB (tests/support/ducklake_writer),
// describing the version's data files; a build without DuckDB writes placeholder bytes.

#include "tests/support/ducklake_writer.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mirror::test {

struct repo_options {
    std::optional<std::string> id = std::string("5f0c8a52-6d3e-4f8e-9b1a-2c7d4e9f0a13");
    std::string data_dir = "data/";
    std::string fdl = "0.1";
    std::vector<std::string> catalog_formats; ///< declared in fdl.json
};

struct version_options {
    std::optional<std::string> parent;   ///< the first parent; none for a root version
    std::vector<std::string> data_files; ///< paths under data_dir, added with add_data_file
    bool files_json = true;
    bool dataset = true;
    std::vector<std::string> catalog_formats; ///< writes catalogs/<format>.duckdb
    std::map<std::string, std::string> extra_files; ///< host files in the version folder
    std::string message = "a version";
    std::string catalog_format = "1.0"; ///< the DuckLake format of ducklake.duckdb
    /// The catalog to write instead of one made from `data_files` (a real lake); its
    /// last snapshot is the version's.
    std::optional<catalog_model> catalog;
    /// Changes the catalog's model before it is written (hostile variants); files.json
    /// is made from the model before this runs, so it describes the honest catalog.
    std::function<void(catalog_model&)> edit_catalog;
    std::optional<std::string> files_json_text; ///< files.json as given instead of made
    std::optional<std::string> dataset_json_text; ///< dataset.json as given instead of made
    std::optional<std::uint64_t> record_snapshot_id; ///< ducklake.snapshot_id to claim
};

class publisher {
public:
    publisher(std::filesystem::path root, repo_options options = {});
    /// Continues a repository already on disk: reads its data_dir, writes no fdl.json.
    static publisher existing(std::filesystem::path root);

    /// Writes a data file under data_dir (a path like "main/t/ducklake-1.parquet").
    void add_data_file(std::string const& path, std::string const& bytes);
    /// Writes a version: catalog, dataset.json, files.json, catalogs/*, then version.json,
    /// then version.json.sig when sign_new_versions was called (before any ref can name it).
    std::string add_version(version_options options);
    /// Signs every version add_version writes from now on with `key` for namespace `ns`.
    void sign_new_versions(std::filesystem::path key, std::string ns = "fdl");

    void set_branch(std::string const& name, std::string const& id);
    void set_tag(std::string const& name, std::string const& id);
    void set_head(std::string const& branch);
    /// Writes refs.json from every ref under refs/ and HEAD.
    void write_refs_json();
    /// Retention: adds expired.json and deletes catalog, files.json and catalogs/*.
    /// Withdrawal also drops `message` from version.json, as a host may.
    void expire(std::string const& id, bool withdrawn);
    /// Adds catalogs/<format>.duckdb to a version after the fact, describing the same files
    /// as its catalog (or, with `edit`, something else).
    void add_late_catalog(std::string const& id, std::string const& format,
                          std::function<void(catalog_model&)> const& edit = {});
    /// The model of a version's catalog as this publisher wrote it.
    catalog_model const& catalog_of(std::string const& id) const { return models_.at(id); }
    /// Signs nothing: writes placeholder bytes as version.json.sig.
    void add_signature_placeholder(std::string const& id);
    /// Signs version.json with `ssh-keygen -Y sign -n NS -f KEY`, as a writer would. Throws
    /// when version.json.sig already exists, or when ssh-keygen fails (quoting it).
    void sign(std::string const& id, std::filesystem::path const& key, std::string const& ns = "fdl");
    /// Rewrites fdl.json with a `signers` list (lines of an allowed_signers file).
    void announce_signers(std::vector<std::string> const& lines);

    std::filesystem::path const& root() const { return root_; }
    std::filesystem::path version_dir(std::string const& id) const { return root_ / "versions" / id; }
    std::filesystem::path data_path(std::string const& path) const { return root_ / options_.data_dir / path; }
    std::string const& data_dir() const { return options_.data_dir; }
    /// Size of a data file added earlier.
    std::uint64_t data_size(std::string const& path) const { return data_sizes_.at(path); }

private:
    struct no_settings {};
    publisher(std::filesystem::path root, repo_options options, no_settings);
    std::uint64_t seq_of(std::string const& id);
    std::filesystem::path root_;
    repo_options options_;
    std::map<std::string, std::uint64_t> data_sizes_;
    std::map<std::string, std::uint64_t> seq_of_;
    std::map<std::string, catalog_model> models_;
    std::optional<std::filesystem::path> signing_key_;
    std::string signing_ns_ = "fdl";
};

/// Writes `model` as a catalog at `file` with DuckDB, or placeholder bytes naming its
/// files in a build without DuckDB.
void write_catalog_file(std::filesystem::path const& file, catalog_model const& model);

/// Makes an SSH key pair with ssh-keygen in `dir` ("ed25519", "ecdsa", "rsa"); returns
/// the private key's path (the public key is beside it, with .pub).
std::filesystem::path make_ssh_key(std::filesystem::path const& dir, std::string const& name,
                                   std::string const& type = "ed25519");
/// "PRINCIPALS [OPTIONS] TYPE BASE64" for an allowed_signers file.
std::string allowed_line(std::string const& principals, std::filesystem::path const& key,
                         std::string const& options = "");

/// Writes bytes to a file, creating folders.
void write_file(std::filesystem::path const& path, std::string const& bytes);
/// Reads a whole file.
std::string read_file(std::filesystem::path const& path);

/// A typical repository: data files shared across versions, three versions on main, a
/// tag v1 on the first, a branch dev ahead of main by one, HEAD on main, refs.json.
struct sample_repo {
    std::vector<std::string> main; ///< oldest first
    std::string dev_tip;
};
sample_repo publish_sample(publisher& p);

/// Problems that break the mirror's promise to readers, as a reader would see them: a ref
/// to a version without version.json, or a version.json whose pinned files or data files
/// are missing or differ. Empty when the repository at `root` is consistent.
std::vector<std::string> reader_visible_problems(std::filesystem::path const& root);

} // namespace mirror::test
