// What a reader of a mirror may rely on, checked independently of the engine's code:
// plain file reads and Boost.JSON, no core/sync.

#include "tests/support/publisher.hpp"
#include "verify/sha256.hpp"

#include <boost/json.hpp>

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

static void check_version(fs::path const& root, std::string const& data_dir, fs::path const& dir,
                          std::vector<std::string>& problems) {
    auto record = json::parse(read_file(dir / "version.json")).as_object();
    if (fs::exists(dir / "expired.json"))
        return; // an expired version keeps only its record and mark
    check_pinned(dir, record, "catalog", problems);
    check_pinned(dir, record, "dataset", problems);
    check_pinned(dir, record, "files", problems);
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
