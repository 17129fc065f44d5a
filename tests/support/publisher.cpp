#include "tests/support/publisher.hpp"

#include "tests/support/uuid7.hpp"
#include "verify/sha256.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mirror::test {

namespace fs = std::filesystem;
namespace json = boost::json;

void write_file(fs::path const& path, std::string const& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
        throw std::runtime_error("cannot write " + path.string());
}

/// As origins should write what readers poll (refs, HEAD, refs.json): a temporary file
/// renamed over the old one, so that a reader sees the old bytes or the new, never a part.
/// The temporary file is in the root, outside refs/, where a listing of refs would see it.
static void replace_file(fs::path const& root, fs::path const& path, std::string const& bytes) {
    fs::path temporary = root / ".publishing";
    write_file(temporary, bytes);
    fs::create_directories(path.parent_path());
    fs::rename(temporary, path);
}

std::string read_file(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path.string());
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

static json::object pin(std::string const& path, std::string const& bytes) {
    return {{"path", path}, {"bytes", bytes.size()}, {"sha256", verify::to_hex(verify::sha256_of(bytes))}};
}

/// The catalog of a version whose data files are `files` ("schema/table/name.parquet"),
/// all added at snapshot `snapshot`: one row each, with the size add_data_file gave it.
static catalog_model model_of_files(std::vector<std::string> const& files, std::uint64_t snapshot,
                                    std::map<std::string, std::uint64_t> const& sizes) {
    catalog_model model;
    model.snapshots = {0, snapshot};
    for (auto const& f : files) {
        auto first = f.find('/');
        auto second = first == std::string::npos ? std::string::npos : f.find('/', first + 1);
        if (second == std::string::npos)
            throw std::runtime_error("publisher: data file paths are schema/table/file, not " + f);
        std::string schema = f.substr(0, first), table = f.substr(first + 1, second - first - 1);
        if (std::none_of(model.schemas.begin(), model.schemas.end(), [&](auto const& s) { return s.name == schema; }))
            model.schemas.push_back({schema});
        auto it = std::find_if(model.tables.begin(), model.tables.end(),
                               [&](auto const& t) { return t.schema == schema && t.name == table; });
        if (it == model.tables.end()) {
            model_table added;
            added.schema = schema;
            added.name = table;
            added.begin = snapshot;
            added.columns = {{1, "value", "VARCHAR", snapshot}};
            model.tables.push_back(added);
            it = std::prev(model.tables.end());
        }
        model_file file;
        file.path = f.substr(second + 1);
        file.begin = snapshot;
        file.rows = 1;
        file.bytes = sizes.at(f);
        it->files.push_back(file);
    }
    return model;
}

/// files.json as the writer makes it from the catalog.
static std::string files_json_text_of(catalog_model const& model, std::uint64_t snapshot) {
#ifdef FDL_MIRROR_HAVE_DUCKDB
    return files_json_of(model, snapshot);
#else
    json::object tables;
    for (auto const& t : model.tables) {
        json::array files;
        for (auto const& f : t.files)
            files.push_back(json::object{{"path", t.schema + "/" + t.name + "/" + f.path}, {"rows", f.rows}, {"bytes", f.bytes}});
        tables[t.schema + "." + t.name] = json::object{{"files", std::move(files)}};
    }
    return json::serialize(json::object{{"tables", std::move(tables)}}) + "\n";
#endif
}

void write_catalog_file(fs::path const& file, catalog_model const& model) {
    fs::create_directories(file.parent_path());
    fs::remove(file);
#ifdef FDL_MIRROR_HAVE_DUCKDB
    write_catalog(file, model);
#else
    std::string placeholder = "placeholder DuckLake catalog, format " + model.format + "\n";
    for (auto const& t : model.tables)
        for (auto const& f : t.files)
            placeholder += t.schema + "/" + t.name + "/" + f.path + "\n";
    write_file(file, placeholder);
#endif
}

publisher::publisher(fs::path root, repo_options options) : root_(std::move(root)), options_(std::move(options)) {
    json::object settings{{"fdl", options_.fdl}, {"data_dir", options_.data_dir}};
    if (options_.id)
        settings["id"] = *options_.id;
    if (!options_.catalog_formats.empty()) {
        json::array formats;
        for (auto const& f : options_.catalog_formats)
            formats.push_back(json::object{{"ducklake", f}});
        settings["catalog_formats"] = std::move(formats);
    }
    write_file(root_ / "fdl.json", json::serialize(settings) + "\n");
}

publisher::publisher(fs::path root, repo_options options, no_settings)
    : root_(std::move(root)), options_(std::move(options)) {}

publisher publisher::existing(fs::path root) {
    auto settings = json::parse(read_file(root / "fdl.json")).as_object();
    repo_options options;
    if (auto const* d = settings.if_contains("data_dir"))
        options.data_dir = std::string(d->as_string());
    publisher out(std::move(root), options, no_settings{});
    fs::path data = out.root_ / options.data_dir;
    if (fs::exists(data))
        for (auto const& entry : fs::recursive_directory_iterator(data))
            if (entry.is_regular_file())
                out.data_sizes_[fs::relative(entry.path(), data).generic_string()] = entry.file_size();
    return out;
}

std::uint64_t publisher::seq_of(std::string const& id) {
    if (auto it = seq_of_.find(id); it != seq_of_.end())
        return it->second;
    auto record = json::parse(read_file(version_dir(id) / "version.json")).as_object();
    return seq_of_[id] = record.at("seq").to_number<std::uint64_t>();
}

void publisher::add_data_file(std::string const& path, std::string const& bytes) {
    write_file(data_path(path), bytes);
    data_sizes_[path] = bytes.size();
}

std::string publisher::add_version(version_options options) {
    std::string id = next_version_id();
    fs::path dir = version_dir(id);
    std::uint64_t seq = options.parent ? seq_of(*options.parent) + 1 : 1;
    seq_of_[id] = seq;

    catalog_model model = options.catalog ? *options.catalog : model_of_files(options.data_files, seq, data_sizes_);
    model.format = options.catalog ? model.format : options.catalog_format;
    std::uint64_t snapshot = model.snapshots.back();
    std::string honest_files_json = files_json_text_of(model, snapshot);
    models_[id] = model;
    if (options.edit_catalog)
        options.edit_catalog(model);
    write_catalog_file(dir / "ducklake.duckdb", model);
    std::string catalog = read_file(dir / "ducklake.duckdb");

    json::object record{{"fdl", "0.1"},
                        {"id", id},
                        {"seq", seq},
                        {"parents", options.parent ? json::array{json::value(*options.parent)} : json::array{}},
                        {"created_at", "2026-10-30T09:00:00Z"},
                        {"author", json::object{{"name", "test publisher"}}},
                        {"message", options.message},
                        {"catalog", pin("ducklake.duckdb", catalog)},
                        {"ducklake", json::object{{"format", models_[id].format},
                                                  {"snapshot_id", options.record_snapshot_id.value_or(snapshot)},
                                                  {"snapshots", json::array{snapshot}}}},
                        {"annotations", json::object{}}};
    record["catalog"].as_object()["storage"] = "duckdb-v1.5.0";
    if (options.dataset) {
        std::string dataset = options.dataset_json_text.value_or(
            json::serialize(json::object{{"name", "sample"}, {"title", "Sample dataset"}}) + "\n");
        write_file(dir / "dataset.json", dataset);
        record["dataset"] = pin("dataset.json", dataset);
    }
    if (options.files_json) {
        std::string files = options.files_json_text.value_or(honest_files_json);
        write_file(dir / "files.json", files);
        record["files"] = pin("files.json", files);
    }
    for (auto const& format : options.catalog_formats) {
        catalog_model other = models_[id];
        other.format = format;
        write_catalog_file(dir / "catalogs" / (format + ".duckdb"), other);
    }
    for (auto const& [name, bytes] : options.extra_files)
        write_file(dir / name, bytes);
    write_file(dir / "version.json", json::serialize(record) + "\n"); // last, as the spec says
    if (signing_key_)
        sign(id, *signing_key_, signing_ns_);
    return id;
}

void publisher::sign_new_versions(fs::path key, std::string ns) {
    signing_key_ = std::move(key);
    signing_ns_ = std::move(ns);
}

void publisher::set_branch(std::string const& name, std::string const& id) {
    replace_file(root_, root_ / "refs" / "heads" / name, id + "\n");
}

void publisher::set_tag(std::string const& name, std::string const& id) {
    replace_file(root_, root_ / "refs" / "tags" / name, id + "\n");
}

void publisher::set_head(std::string const& branch) {
    replace_file(root_, root_ / "HEAD", "ref: refs/heads/" + branch + "\n");
}

void publisher::write_refs_json() {
    json::object refs;
    if (fs::exists(root_ / "refs"))
        for (auto const& entry : fs::recursive_directory_iterator(root_ / "refs"))
            if (entry.is_regular_file()) {
                std::string content = read_file(entry.path());
                if (content.ends_with('\n'))
                    content.pop_back();
                refs[fs::relative(entry.path(), root_).generic_string()] = content;
            }
    json::object document{{"refs", std::move(refs)}};
    if (fs::exists(root_ / "HEAD")) {
        std::string head = read_file(root_ / "HEAD");
        if (head.ends_with('\n'))
            head.pop_back();
        document["HEAD"] = head;
    }
    replace_file(root_, root_ / "refs.json", json::serialize(document) + "\n");
}

void publisher::expire(std::string const& id, bool withdrawn) {
    fs::path dir = version_dir(id);
    json::object mark{{"expired_at", "2026-11-01T00:00:00Z"}};
    if (withdrawn)
        mark["reason"] = "withdrawn";
    write_file(dir / "expired.json", json::serialize(mark) + "\n");
    fs::remove(dir / "ducklake.duckdb");
    fs::remove(dir / "files.json");
    fs::remove_all(dir / "catalogs");
    if (withdrawn) {
        auto record = json::parse(read_file(dir / "version.json")).as_object();
        record.erase("message");
        write_file(dir / "version.json", json::serialize(record) + "\n");
    }
}

void publisher::add_late_catalog(std::string const& id, std::string const& format,
                                 std::function<void(catalog_model&)> const& edit) {
    catalog_model model = models_.at(id);
    model.format = format;
    if (edit)
        edit(model);
    write_catalog_file(version_dir(id) / "catalogs" / (format + ".duckdb"), model);
}

void publisher::add_signature_placeholder(std::string const& id) {
    write_file(version_dir(id) / "version.json.sig", "-----BEGIN SSH SIGNATURE-----\nplaceholder\n-----END SSH SIGNATURE-----\n");
}

/// `text` as one shell word.
static std::string shell_quoted(std::string const& text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

void publisher::sign(std::string const& id, fs::path const& key, std::string const& ns) {
    fs::path record = version_dir(id) / "version.json";
    // ssh-keygen would ask before overwriting and, with no answer, keep the old signature.
    if (fs::exists(record.string() + ".sig"))
        throw std::runtime_error(record.string() + ".sig: already exists (remove it to sign again)");
    std::string command = "ssh-keygen -Y sign -q -f " + shell_quoted(key.string()) + " -n " + shell_quoted(ns) + " " +
                          shell_quoted(record.string()) + " </dev/null 2>&1";
    std::FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe)
        throw std::runtime_error(record.string() + ": cannot run ssh-keygen -Y sign");
    std::string said;
    char buffer[512];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
        said.append(buffer, n);
    int status = ::pclose(pipe);
    while (said.ends_with('\n'))
        said.pop_back();
    if (status != 0 || !fs::exists(record.string() + ".sig"))
        throw std::runtime_error(record.string() + ": ssh-keygen -Y sign with " + key.string() + " failed: " +
                                 (said.empty() ? "no message" : said));
}

void publisher::announce_signers(std::vector<std::string> const& lines) {
    auto settings = json::parse(read_file(root_ / "fdl.json")).as_object();
    settings["signers"] = json::array(lines.begin(), lines.end());
    write_file(root_ / "fdl.json", json::serialize(settings) + "\n");
}

fs::path make_ssh_key(fs::path const& dir, std::string const& name, std::string const& type) {
    fs::create_directories(dir);
    fs::path key = dir / name;
    std::string command = "ssh-keygen -q -t " + type + " -N '' -C " + name + " -f '" + key.string() + "'";
    if (std::system(command.c_str()) != 0)
        throw std::runtime_error("ssh-keygen could not make " + key.string());
    return key;
}

std::string allowed_line(std::string const& principals, fs::path const& key, std::string const& options) {
    std::string pub = read_file(key.string() + ".pub");
    auto second_space = pub.find(' ', pub.find(' ') + 1);
    std::string type_and_key = pub.substr(0, second_space);
    if (type_and_key.ends_with('\n'))
        type_and_key.pop_back();
    return principals + (options.empty() ? "" : " " + options) + " " + type_and_key;
}

sample_repo publish_sample(publisher& p) {
    p.add_data_file("main/population/ducklake-0001.parquet", std::string(3000, 'a'));
    p.add_data_file("main/population/ducklake-0002.parquet", std::string(5000, 'b'));
    p.add_data_file("main/towns/ducklake-0003.parquet", std::string(700, 'c'));
    p.add_data_file("main/population/ducklake-0004.parquet", std::string(1200, 'd'));
    sample_repo out;
    version_options v1;
    v1.data_files = {"main/population/ducklake-0001.parquet"};
    v1.message = "first";
    out.main.push_back(p.add_version(v1));
    version_options v2;
    v2.parent = out.main.back();
    v2.data_files = {"main/population/ducklake-0001.parquet", "main/population/ducklake-0002.parquet",
                     "main/towns/ducklake-0003.parquet"};
    v2.message = "second";
    out.main.push_back(p.add_version(v2));
    version_options v3;
    v3.parent = out.main.back();
    v3.data_files = {"main/population/ducklake-0002.parquet", "main/towns/ducklake-0003.parquet"};
    v3.message = "third";
    out.main.push_back(p.add_version(v3));
    version_options dev;
    dev.parent = out.main.back();
    dev.data_files = {"main/population/ducklake-0002.parquet", "main/population/ducklake-0004.parquet"};
    dev.message = "on dev";
    out.dev_tip = p.add_version(dev);
    p.set_branch("main", out.main.back());
    p.set_branch("dev", out.dev_tip);
    p.set_tag("v1", out.main.front());
    p.set_head("main");
    p.write_refs_json();
    return out;
}

} // namespace mirror::test
