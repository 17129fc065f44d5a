#include "core/catalog/catalog_reader.hpp"

#include "core/catalog/catalog_objects.hpp"
#include "core/catalog/catalog_rows.hpp"
#include "core/catalog/duckdb_session.hpp"
#include "core/catalog/resolve.hpp"
#include "core/fdl/paths.hpp"
#include "core/io/text.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace mirror::catalog {

namespace {

std::optional<std::uint64_t> count_of(std::optional<std::string> const& text) {
    if (!text)
        return std::nullopt;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size())
        return std::nullopt;
    return value;
}

/// What a catalog may name a table it holds inlined rows in.
bool is_inlined_table_name(std::string_view name) {
    for (std::string_view prefix : {"ducklake_inlined_data_", "ducklake_inlined_delete_"}) {
        if (!name.starts_with(prefix) || name.size() == prefix.size())
            continue;
        auto rest = name.substr(prefix.size());
        return rest.find_first_not_of("0123456789_") == std::string_view::npos;
    }
    return false;
}

/// One live file, checked.
struct live_file {
    bool is_delete = false;
    std::int64_t data_file_id = 0; ///< for a delete file, the data file it applies to
    std::string const* table;      ///< "schema.table", kept by the reader
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> footer_bytes;
    std::string path; ///< relative to data_dir
};

/// The one row of `rows` with id `id` visible at `snapshot`; two are damaged bookkeeping.
template <class Row>
Row const* visible_row(std::vector<Row> const& rows, std::optional<std::int64_t> id, std::uint64_t snapshot,
                       bool& ambiguous) {
    Row const* found = nullptr;
    if (!id)
        return nullptr;
    for (auto const& row : rows)
        if (row.id == id && row.life.visible_at(snapshot)) {
            if (found != nullptr)
                ambiguous = true;
            found = found != nullptr ? found : &row;
        }
    return found;
}

/// Turns the rows of the catalog's base tables into its contents. Everything that decides
/// trust (visibility, joins, paths, sizes) is computed here, on values, not in SQL.
class reader {
public:
    reader(catalog_rows const& rows, std::string const& name, read_options const& options, catalog_contents& out)
        : rows_(rows), name_(name), options_(options), out_(out) {}

    result<void> read() {
        out_.problems = rows_.problems;
        if (auto ok = read_settings(); !ok)
            return ok;
        check_snapshot_signs();
        if (auto ok = read_snapshots(); !ok)
            return ok;
        read_tables();
        auto live = files_at(out_.last_snapshot);
        attach_files(live);
        add_needed(live);
        for (auto snapshot : options_.snapshots) {
            if (snapshot == out_.last_snapshot)
                continue;
            if (!std::binary_search(out_.retained_snapshots.begin(), out_.retained_snapshots.end(), snapshot)) {
                problem(catalog_errc::snapshot_mismatch, "version.json lists snapshot " + std::to_string(snapshot) +
                                                             ", which the catalog does not retain");
                continue;
            }
            add_needed(files_at(snapshot));
        }
        read_views();
        return {};
    }

private:
    void problem(catalog_errc code, std::string const& why) { out_.problems.push_back(make_error(code, name_ + ": " + why)); }
    error fail(catalog_errc code, std::string const& why) const { return make_error(code, name_ + ": " + why); }

    /// Snapshot ids are never negative (spec/ducklake-catalog.md, section 4); one that is
    /// would make its row visible at every snapshot, or at none, as comparisons fall.
    void check_snapshot_signs() {
        auto count = [](auto const& rows) {
            return std::count_if(rows.begin(), rows.end(), [](auto const& row) {
                return row.life.begin.value_or(0) < 0 || row.life.end.value_or(0) < 0;
            });
        };
        std::pair<char const*, std::ptrdiff_t> const negative[] = {{"ducklake_schema", count(rows_.schemas)},
                                                                   {"ducklake_table", count(rows_.tables)},
                                                                   {"ducklake_data_file or ducklake_delete_file",
                                                                    count(rows_.files)},
                                                                   {"ducklake_view", count(rows_.views)}};
        for (auto const& [table, rows] : negative)
            if (rows > 0)
                problem(catalog_errc::bad_catalog, std::to_string(rows) + " row(s) of " + table +
                                                       " with a negative begin_snapshot or end_snapshot");
    }

    result<void> read_settings() {
        std::map<std::string, std::string, std::less<>> global;
        for (auto const& row : rows_.settings) {
            // A data_path for one schema or table would send DuckLake's readers of it
            // elsewhere than the paths this reader resolves: not a catalog to guess about.
            if (!row.global && row.key == "data_path")
                return fail(catalog_errc::bad_catalog, "a data_path scoped to one schema or table in ducklake_metadata");
            if (!row.global || !row.key || !row.value)
                continue;
            std::string const& key = *row.key;
            if (key != "version" && key != "data_path" && key != "encrypted")
                continue;
            // DuckLake keeps one global value per key; with two, readers could take either.
            if (!global.emplace(key, *row.value).second)
                return fail(catalog_errc::bad_catalog, "two global '" + key + "' settings in ducklake_metadata");
        }
        if (auto e = global.find("encrypted"); e != global.end() && e->second == "true")
            return fail(catalog_errc::bad_catalog, "encrypted catalogs are not read");
        if (auto v = global.find("version"); v != global.end())
            out_.format = v->second;
        if (auto d = global.find("data_path"); d != global.end()) {
            out_.data_path = d->second;
            data_path_ = d->second;
        }
        if (!is_known_format(out_.format))
            return fail(catalog_errc::unknown_format,
                        "DuckLake format '" + std::string(io::utf8_prefix(out_.format, 40)) + "' is not known");
        return {};
    }

    result<void> read_snapshots() {
        for (auto const& text : rows_.snapshot_ids) {
            auto id = count_of(text);
            if (!id)
                return fail(catalog_errc::bad_catalog, "a snapshot id is not a non-negative integer");
            out_.retained_snapshots.push_back(*id);
        }
        std::sort(out_.retained_snapshots.begin(), out_.retained_snapshots.end());
        out_.retained_snapshots.erase(std::unique(out_.retained_snapshots.begin(), out_.retained_snapshots.end()),
                                      out_.retained_snapshots.end());
        if (out_.retained_snapshots.empty())
            return fail(catalog_errc::bad_catalog, "no snapshot");
        out_.last_snapshot = out_.retained_snapshots.back();
        return {};
    }

    schema_row const* schema_at(std::optional<std::int64_t> id, std::uint64_t snapshot) {
        bool ambiguous = false;
        auto const* row = visible_row(rows_.schemas, id, snapshot, ambiguous);
        if (ambiguous)
            problem(catalog_errc::bad_catalog, "schema id " + std::to_string(*id) + " has two rows visible at snapshot " +
                                                   std::to_string(snapshot));
        return row;
    }

    table_row const* table_at(std::optional<std::int64_t> id, std::uint64_t snapshot) {
        bool ambiguous = false;
        auto const* row = visible_row(rows_.tables, id, snapshot, ambiguous);
        if (ambiguous)
            problem(catalog_errc::bad_catalog, "table id " + std::to_string(*id) + " has two rows visible at snapshot " +
                                                   std::to_string(snapshot));
        return row;
    }

    /// Tables visible at the last snapshot, by schema and name, and whether a column of
    /// theirs ever carried two names (within the history still in the catalog).
    void read_tables() {
        std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::string>> names; // (table, column) -> names
        for (auto const& c : rows_.columns)
            if (c.table_id && c.column_id && c.name)
                names[{*c.table_id, *c.column_id}].insert(*c.name);
        std::set<std::int64_t> renamed;
        for (auto const& [key, seen] : names)
            if (seen.size() > 1)
                renamed.insert(key.first);
        struct listed {
            std::optional<std::string> schema;
            std::string table;
            std::int64_t id;
            bool renamed;
        };
        std::vector<listed> found;
        for (auto const& t : rows_.tables) {
            if (!t.life.visible_at(out_.last_snapshot))
                continue;
            auto const* schema = schema_at(t.schema_id, out_.last_snapshot);
            if (schema == nullptr || !schema->name || !t.name) {
                problem(catalog_errc::bad_catalog, "a table's schema or name is not visible at snapshot " +
                                                       std::to_string(out_.last_snapshot));
                continue;
            }
            found.push_back({schema->name, *t.name, t.id.value_or(0), t.id && renamed.contains(*t.id)});
        }
        std::sort(found.begin(), found.end(), [](listed const& a, listed const& b) {
            return std::tie(a.schema, a.table, a.id) < std::tie(b.schema, b.table, b.id);
        });
        for (auto const& t : found)
            out_.tables.push_back({*t.schema + "." + t.table, t.renamed, {}});
    }

    /// Data and delete files visible at `snapshot` (data files first, each kind by id),
    /// their paths resolved and checked; a file that breaks a rule is a problem, left out.
    std::vector<live_file> files_at(std::uint64_t snapshot) {
        std::vector<file_row const*> visible;
        for (auto const& f : rows_.files)
            if (f.life.visible_at(snapshot))
                visible.push_back(&f);
        std::stable_sort(visible.begin(), visible.end(), [](file_row const* a, file_row const* b) {
            return std::tie(a->is_delete, a->id) < std::tie(b->is_delete, b->id);
        });
        std::vector<live_file> out;
        out.reserve(visible.size());
        for (auto const* f : visible)
            if (auto checked = check_file(*f, snapshot))
                out.push_back(std::move(*checked));
        return out;
    }

    std::optional<live_file> check_file(file_row const& f, std::uint64_t snapshot) {
        auto const* table = table_at(f.table_id, snapshot);
        auto const* schema = table != nullptr ? schema_at(table->schema_id, snapshot) : nullptr;
        if (!f.path) {
            problem(catalog_errc::bad_catalog, "a file of ducklake_" + std::string(f.is_delete ? "delete" : "data") +
                                                   "_file has no path");
            return std::nullopt;
        }
        path_level none;
        auto where = resolve_path(data_path_, schema != nullptr ? schema->level : none,
                                  table != nullptr ? table->level : none, *f.path, f.relative.value_or(true));
        auto shown = [&] { return "'" + std::string(io::utf8_prefix(where.full, 200)) + "'"; }; // for messages only
        if (!where.relative) {
            problem(catalog_errc::outside_data_dir, shown() + " lies outside data_dir");
            return std::nullopt;
        }
        if (auto unsafe = fdl::relative_path_problem(*where.relative)) {
            problem(catalog_errc::outside_data_dir, shown() + ": " + *unsafe);
            return std::nullopt;
        }
        if (schema == nullptr || !schema->name || !table->name) {
            problem(catalog_errc::bad_catalog, shown() + ": its table is not visible at snapshot " + std::to_string(snapshot));
            return std::nullopt;
        }
        // Inside data_path, yet written out in full: a reader of the mirror overrides
        // data_path, never this path, and would be sent back to the origin (spec README:
        // absolute paths are refused).
        auto relative_level = [](auto const* row) { return row == nullptr || row->level.relative.value_or(true); };
        if (!f.relative.value_or(true) || !relative_level(table) || !relative_level(schema)) {
            problem(catalog_errc::absolute_path, shown() + " is an absolute path, which readers of a mirror cannot "
                                                           "redirect to it");
            return std::nullopt;
        }
        // Readers of a DuckLake read Parquet; a file of another format, or with a key in a
        // catalog that says nothing is encrypted, would be mirrored for no reader to read.
        if (f.format && *f.format != "parquet") {
            problem(catalog_errc::bad_catalog, shown() + ": a file format '" +
                                                   std::string(io::utf8_prefix(*f.format, 40)) +
                                                   "', where DuckLake's readers read parquet");
            return std::nullopt;
        }
        if (f.has_key) {
            problem(catalog_errc::bad_catalog, shown() + ": an encryption_key, in a catalog that says it is not "
                                                         "encrypted");
            return std::nullopt;
        }
        auto row_count = count_of(f.rows);
        auto size = count_of(f.bytes);
        if (!row_count || !size) {
            problem(catalog_errc::bad_catalog, shown() + ": row count or size is not a non-negative integer");
            return std::nullopt;
        }
        if (f.is_delete && !f.data_file_id) {
            problem(catalog_errc::bad_catalog, "delete file '" + *where.relative + "' applies to no live data file");
            return std::nullopt;
        }
        return live_file{f.is_delete, f.data_file_id.value_or(0), &name_of(*schema, *table), *row_count,
                         *size,       count_of(f.footer),         std::move(*where.relative)};
    }

    /// "schema.table", made once per table rather than once per file.
    std::string const& name_of(schema_row const& schema, table_row const& table) {
        auto [at, added] = table_names_.try_emplace({&schema, &table});
        if (added)
            at->second = *schema.name + "." + *table.name;
        return at->second;
    }

    /// Puts the live data files under their tables, and each delete file on its data file.
    void attach_files(std::vector<live_file> const& live) {
        std::map<std::string, std::size_t, std::less<>> table_at;
        for (std::size_t i = 0; i < out_.tables.size(); ++i)
            table_at.emplace(out_.tables[i].name, i);
        // Indexes, not pointers: the vectors grow while this fills them.
        std::unordered_map<std::int64_t, std::pair<std::size_t, std::size_t>> data_by_id;
        for (auto const& f : live) {
            if (f.is_delete)
                continue;
            auto at = table_at.find(*f.table);
            if (at == table_at.end()) {
                problem(catalog_errc::bad_catalog, "'" + f.path + "': its table " + *f.table + " is not listed");
                continue;
            }
            auto& files = out_.tables[at->second].files;
            files.push_back({f.path, f.rows, f.bytes, f.footer_bytes, {}});
            data_by_id[f.data_file_id] = {at->second, files.size() - 1};
        }
        for (auto const& f : live) {
            if (!f.is_delete)
                continue;
            auto target = data_by_id.find(f.data_file_id);
            if (target == data_by_id.end()) {
                problem(catalog_errc::bad_catalog, "delete file '" + f.path + "' applies to no live data file");
                continue;
            }
            auto& data = out_.tables[target->second.first].files[target->second.second];
            if (data.deletes) {
                problem(catalog_errc::bad_catalog, "'" + data.path + "' has two live delete files");
                continue;
            }
            data.deletes = catalog_delete{f.path, f.rows, f.bytes};
        }
    }

    void add_needed(std::vector<live_file> const& files) {
        needed_size_.reserve(needed_size_.size() + files.size());
        out_.needed.reserve(out_.needed.size() + files.size());
        for (auto const& f : files) {
            auto [at, added] = needed_size_.emplace(f.path, f.bytes);
            if (added)
                out_.needed.push_back({f.path, f.bytes});
            else if (at->second != f.bytes)
                problem(catalog_errc::bad_catalog, "'" + f.path + "' is recorded with two sizes, " +
                                                       std::to_string(at->second) + " and " + std::to_string(f.bytes));
        }
    }

    /// Views visible at the last snapshot (DuckLake keeps them as rows), by schema and name.
    void read_views() {
        for (auto const& v : rows_.views) {
            if (!v.life.visible_at(out_.last_snapshot))
                continue;
            bool ambiguous = false;
            auto const* schema = visible_row(rows_.schemas, v.schema_id, out_.last_snapshot, ambiguous);
            std::string schema_name = schema != nullptr && schema->name ? *schema->name : "?";
            out_.views.push_back({schema_name + "." + v.name.value_or("?"), v.dialect.value_or(""), v.sql.value_or("")});
        }
        std::sort(out_.views.begin(), out_.views.end(),
                  [](catalog_view const& a, catalog_view const& b) { return a.name < b.name; });
    }

    catalog_rows const& rows_;
    std::string const& name_;
    read_options const& options_;
    catalog_contents& out_;
    std::optional<std::string> data_path_;
    std::unordered_map<std::string, std::uint64_t> needed_size_; ///< path -> bytes, of `needed`
    std::map<std::pair<schema_row const*, table_row const*>, std::string> table_names_; ///< for name_of
};

/// Every inlined-rows table of the catalog (ducklake_inlined_data_<table>_<schema version>
/// and ducklake_inlined_delete_<table>, registered or not) must be empty.
result<void> check_inlined(duckdb_session& db, std::vector<std::string> const& tables, std::string const& name,
                           catalog_contents& out) {
    for (auto const& table : tables) {
        bool inlined = table.starts_with("ducklake_inlined_data_") || table.starts_with("ducklake_inlined_delete_");
        if (!inlined || table == "ducklake_inlined_data_tables")
            continue;
        if (!is_inlined_table_name(table)) {
            out.problems.push_back(
                make_error(catalog_errc::bad_catalog,
                           name + ": unexpected catalog table '" + std::string(io::utf8_prefix(table, 100)) + "'"));
            continue;
        }
        // count_star from the system catalog: nothing of the attached catalog is in its way.
        auto count = db.query("SELECT system.main.count_star() FROM " + qualified_table(db, table), 1);
        if (!count)
            return count.error();
        auto rows = count->rows.empty() ? std::nullopt : count_of(count->rows[0][0]);
        if (rows && *rows > 0)
            out.problems.push_back(make_error(catalog_errc::inlined_rows,
                                              name + ": " + table + " holds " + std::to_string(*rows) +
                                                  " rows inside the catalog instead of in data files"));
    }
    return {};
}

/// Reads the rows of an attached catalog whose objects passed the check (`tables`).
result<catalog_contents> read_checked(duckdb_session& session, std::vector<std::string> const& tables,
                                      std::string const& name, read_options const& options) {
    auto rows = read_catalog_rows(session, name, options);
    if (!rows)
        return rows.error();
    catalog_contents out;
    if (auto ok = reader(*rows, name, options, out).read(); !ok)
        return ok.error();
    if (auto ok = check_inlined(session, tables, name, out); !ok)
        return ok.error();
    // What the process that asked would take to hold them: checked here, before an answer
    // that large is made (the parent holds the answer to the same sums as it decodes it).
    if (auto bytes = out.memory_bytes(); options.max_memory != 0 && bytes > options.max_memory)
        return make_error(catalog_errc::over_memory_limit,
                          name + ": its contents (" + std::to_string(out.data_file_count()) + " live data files) " +
                              "would take " + std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB of memory, " +
                              "more than the " + std::to_string(options.max_memory >> 20) +
                              " MiB this mirror allows one version's catalog (memory_limit)");
    return out;
}

session_options session_for(std::string const& name, read_options const& options) {
    session_options session;
    session.deadline = std::chrono::steady_clock::now() + options.time_limit;
    session.name = name;
    return session;
}

} // namespace

bool reader_available() noexcept { return true; }

struct catalog_reader::impl {
    std::filesystem::path folder;
    std::unique_ptr<duckdb_instance> db;
    bool restricted = false; ///< db allows the folder only (a prepared one does not yet)

    /// The database, opened anew when it is unusable or has another memory limit.
    result<duckdb_instance*> database(std::string const& memory_limit, std::string const& name) {
        if (folder.empty())
            return make_error(catalog_errc::cannot_open, name + ": the catalog reader has no folder");
        if (db && (!db->usable() || db->memory_limit() != memory_limit))
            db.reset();
        if (db && !restricted) {
            if (auto ok = db->restrict_to(folder); !ok) {
                db.reset();
                return with_context(ok.error(), name);
            }
            restricted = true;
        }
        if (!db) {
            auto opened = duckdb_instance::open(folder, memory_limit);
            if (!opened)
                return with_context(opened.error(), name);
            db = std::move(*opened);
            restricted = true;
        }
        return db.get();
    }
};

catalog_reader::catalog_reader(std::filesystem::path folder) : impl_(std::make_unique<impl>()) {
    impl_->folder = std::move(folder);
}

void catalog_reader::prepare(std::string const& memory_limit) {
    if (impl_->db)
        return;
    auto opened = duckdb_instance::open_unrestricted(memory_limit);
    if (!opened)
        return;
    impl_->db = std::move(*opened);
    impl_->restricted = false;
    // DuckDB's first listings of a process build what later ones reuse, and fault its code
    // in: about 25 ms that would otherwise fall on the first catalog. No catalog is attached
    // yet, so these read DuckDB's own objects only.
    if (auto warm = duckdb_session::attach_none(*impl_->db))
        for (char const* listing : {"duckdb_schemas()", "duckdb_tables()", "duckdb_columns()", "duckdb_views()",
                                    "duckdb_functions()", "duckdb_types()", "duckdb_sequences()", "duckdb_indexes()"})
            (void)(*warm)->query(std::string("SELECT count(*) FROM system.main.") + listing, 1);
}

void catalog_reader::set_folder(std::filesystem::path folder) { impl_->folder = std::move(folder); }
catalog_reader::~catalog_reader() = default;

result<catalog_contents> catalog_reader::read(std::filesystem::path const& private_copy, std::string const& name,
                                              read_options const& options) {
    auto db = impl_->database(options.memory_limit, name);
    if (!db)
        return db.error();
    auto read = [&]() -> result<catalog_contents> {
        auto attached = duckdb_session::attach(**db, private_copy, session_for(name, options));
        if (!attached)
            return attached.error();
        auto& session = **attached;
        // What the catalog defines is checked before any of its rows is read.
        auto tables = check_catalog_objects(session, name);
        if (!tables)
            return tables.error();
        return read_checked(session, *tables, name, options);
    }; // the catalog is detached when its session ends, before the database can go
    auto out = read();
    if (!out)
        impl_->db.reset(); // whatever went wrong stays with this catalog
    return out;
}

std::vector<result<catalog_contents>> catalog_reader::read_batch(std::vector<batch_item> const& items) {
    std::vector<std::optional<result<catalog_contents>>> out(items.size());
    bool alike = std::all_of(items.begin(), items.end(), [&](batch_item const& item) {
        return item.options.memory_limit == items.front().options.memory_limit;
    });
    // One database serves the batch: with one catalog, or limits that differ, each is read alone.
    duckdb_instance* db = nullptr; // none: each is read alone, and says why it cannot be
    if (items.size() > 1 && alike)
        if (auto opened = impl_->database(items.front().options.memory_limit, items.front().name))
            db = *opened;
    if (db != nullptr) {
        bool failed = false; // then nothing more is read on this database
        std::vector<std::unique_ptr<duckdb_session>> sessions;
        for (std::size_t i = 0; i < items.size() && !failed; ++i) {
            auto attached = duckdb_session::attach(*db, items[i].file, session_for(items[i].name, items[i].options));
            failed = !attached;
            if (attached)
                sessions.push_back(std::move(*attached));
            else
                out[i] = attached.error(); // about that file: the others are read alone
        }
        std::optional<result<std::vector<result<std::vector<std::string>>>>> checked;
        if (!failed) {
            std::vector<duckdb_session*> attached;
            std::vector<std::string> names;
            for (std::size_t i = 0; i < items.size(); ++i) {
                attached.push_back(sessions[i].get());
                names.push_back(items[i].name);
            }
            // The listings run within the soonest deadline of the batch.
            auto soonest = std::min_element(sessions.begin(), sessions.end(), [](auto const& a, auto const& b) {
                return a->deadline() < b->deadline();
            });
            checked = check_catalog_objects(attached, names, **soonest);
            failed = !*checked; // no verdict on any: each is read alone
        }
        for (std::size_t i = 0; checked && *checked && i < items.size() && !failed; ++i) {
            auto& tables = (**checked)[i];
            if (!tables) {
                out[i] = tables.error(); // a verdict on its objects, read no further
                continue;
            }
            // Each catalog has its whole time limit for its rows, whatever the batch took.
            sessions[i]->set_deadline(std::chrono::steady_clock::now() + items[i].options.time_limit);
            out[i] = read_checked(*sessions[i], tables.value(), items[i].name, items[i].options);
            failed = !*out[i];
        }
        sessions.clear(); // detached before the database can go
        if (failed || std::any_of(out.begin(), out.end(), [](auto const& r) { return r && !*r; }))
            impl_->db.reset(); // whatever went wrong stays with this batch
    }
    std::vector<result<catalog_contents>> results;
    for (std::size_t i = 0; i < items.size(); ++i)
        results.push_back(out[i] ? std::move(*out[i]) : read(items[i].file, items[i].name, items[i].options));
    return results;
}

result<catalog_contents> read_catalog(std::filesystem::path const& private_copy, std::string const& name,
                                      read_options const& options) {
    auto file = std::filesystem::absolute(private_copy);
    return catalog_reader(file.parent_path()).read(file, name, options);
}

} // namespace mirror::catalog
