// What a reader of a mirror may rely on, checked independently of the engine's code:
// plain file reads and Boost.JSON, no core/sync.

#include "tests/support/publisher.hpp"
#include "verify/sha256.hpp"

#include <boost/json.hpp>

#ifdef FDL_MIRROR_HAVE_DUCKDB
#include "core/catalog/duckdb_session.hpp"
#include "tests/support/ducklake_writer.hpp"
#include "tests/support/temp_dir.hpp"
#endif

namespace mirror::test {

namespace fs = std::filesystem;
namespace json = boost::json;

static void check_pinned(fs::path const& dir, json::object const& record, char const* field,
                         std::vector<std::string>& problems) {
    auto const* pinned = record.if_contains(field);
    if (pinned == nullptr)
        return;
    auto const& o = pinned->as_object();
    fs::path file = dir / std::string(o.at("path").as_string());
    if (!fs::is_regular_file(file)) {
        problems.push_back(file.string() + ": pinned by version.json but missing");
        return;
    }
    std::string bytes = read_file(file);
    if (verify::to_hex(verify::sha256_of(bytes)) != o.at("sha256").as_string())
        problems.push_back(file.string() + ": sha256 differs from version.json");
}

#ifdef FDL_MIRROR_HAVE_DUCKDB
/// The data and delete files a reader of the catalog opens, found with the spec's own
/// query (tests/data/ducklake-sql/10_live_files.sql) on a private copy of the catalog.
static void check_catalog_files(fs::path const& root, std::string const& data_dir, fs::path const& catalog,
                                std::vector<std::string>& problems) {
    std::string sql = spec_query("10_live_files.sql", "(SELECT max(snapshot_id) FROM ducklake_snapshot)");
    temp_dir copy;
    fs::copy_file(catalog, copy / "catalog.duckdb");
    auto session = catalog::duckdb_session::open(copy / "catalog.duckdb", {});
    auto rows = session ? (*session)->query(sql) : result<catalog::table>(session.error());
    if (!rows) {
        problems.push_back(catalog.string() + ": a reader cannot list its files: " + rows.error().message);
        return;
    }
    auto path = rows->column("rel_path"), bytes = rows->column("file_size_bytes");
    for (auto const& row : rows->rows) {
        fs::path data = root / data_dir / row[path].value_or("(outside data_dir)");
        if (!fs::is_regular_file(data))
            problems.push_back(data.string() + ": named by the catalog but missing");
        else if (std::to_string(fs::file_size(data)) != row[bytes].value_or(""))
            problems.push_back(data.string() + ": size differs from the catalog");
    }
}
#endif

static void check_version(fs::path const& root, std::string const& data_dir, fs::path const& dir,
                          std::vector<std::string>& problems) {
    auto record = json::parse(read_file(dir / "version.json")).as_object();
    if (fs::exists(dir / "expired.json"))
        return; // an expired version keeps only its record and mark
    std::size_t before = problems.size();
    check_pinned(dir, record, "catalog", problems);
    bool catalog_intact = problems.size() == before;
    check_pinned(dir, record, "dataset", problems);
    check_pinned(dir, record, "files", problems);
#ifdef FDL_MIRROR_HAVE_DUCKDB
    if (auto const* catalog = record.if_contains("catalog"); catalog && catalog_intact) {
        fs::path file = dir / std::string(catalog->as_object().at("path").as_string());
        check_catalog_files(root, data_dir, file, problems);
    }
#endif
    if (auto const* files = record.if_contains("files"); files && fs::exists(dir / "files.json")) {
        auto index = json::parse(read_file(dir / "files.json")).as_object();
        for (auto const& [table, entry] : index.at("tables").as_object())
            for (auto const& f : entry.as_object().at("files").as_array()) {
                fs::path data = root / data_dir / std::string(f.as_object().at("path").as_string());
                if (!fs::is_regular_file(data))
                    problems.push_back(data.string() + ": named by files.json but missing");
                else if (fs::file_size(data) != f.as_object().at("bytes").to_number<std::uint64_t>())
                    problems.push_back(data.string() + ": size differs from files.json");
            }
    }
}

std::vector<std::string> reader_visible_problems(fs::path const& root) {
    std::vector<std::string> problems;
    std::string data_dir = "data/";
    if (fs::exists(root / "fdl.json")) {
        auto settings = json::parse(read_file(root / "fdl.json")).as_object();
        if (auto const* d = settings.if_contains("data_dir"))
            data_dir = std::string(d->as_string());
    } else if (fs::exists(root / "versions") || fs::exists(root / "refs")) {
        problems.push_back("versions or refs without fdl.json");
    }
    if (fs::exists(root / "versions"))
        for (auto const& entry : fs::directory_iterator(root / "versions"))
            if (fs::exists(entry.path() / "version.json"))
                check_version(root, data_dir, entry.path(), problems);
    if (fs::exists(root / "refs"))
        for (auto const& entry : fs::recursive_directory_iterator(root / "refs"))
            if (entry.is_regular_file()) {
                std::string id = read_file(entry.path());
                if (id.ends_with('\n'))
                    id.pop_back();
                if (!fs::exists(root / "versions" / id / "version.json"))
                    problems.push_back(entry.path().string() + ": names " + id + ", which has no version.json");
            }
    if (fs::exists(root / "HEAD")) {
        std::string head = read_file(root / "HEAD");
        if (head.starts_with("ref: ")) {
            std::string name = head.substr(5);
            if (name.ends_with('\n'))
                name.pop_back();
            if (!fs::exists(root / name))
                problems.push_back("HEAD names " + name + ", which does not exist");
        }
    }
    return problems;
}

} // namespace mirror::test
