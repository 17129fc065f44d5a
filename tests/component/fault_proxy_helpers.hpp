#pragma once
// Shared by the fault proxy's tests (fault_proxy_s3_test.cpp, fault_proxy_http_test.cpp):
// quick client settings, what a reader of a mirror would see wrong, curl, and a new
// version to publish.

#include "tests/support/fault_proxy.hpp"

#include "core/io/errors.hpp"
#include "core/store/http_store.hpp"
#include "core/store/s3_store.hpp"
#include "core/sync/sync_pass.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_ca.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>

namespace mirror::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Quick retries and short deadlines, so that faults cost milliseconds. The header
/// deadline leaves room for the proxy, which reads a whole answer (a 4 MiB catalog) from
/// upstream before it sends the head, while versions gathered ahead fetch two at once (the
/// sanitized build is several times slower); the stalls the tests inject (1.5 s) still
/// pass it.
inline http::client_settings quick_client() {
    http::client_settings client;
    client.backoff_base = 1ms;
    client.header_timeout = 1200ms;
    client.body_idle_timeout = 500ms;
    return client;
}

/// Problems a reader of `view` (a mirror as a folder) would meet: any file under data/ or
/// versions/ whose bytes are not the origin's (partial, padded, made up); a version.json
/// without every file of its folder at the origin, or without the data files the origin's
/// files.json names; a ref, refs.json entry or HEAD naming what is not there. Plus, with
/// `reader_check`, what reader_visible_problems finds (DuckDB opens each catalog: slower).
inline std::vector<std::string> mirror_problems(fs::path const& view, fs::path const& origin, bool reader_check = true) {
    auto problems = reader_check ? reader_visible_problems(view) : std::vector<std::string>();
    for (auto const& f : files_under(view)) {
        if (!f.starts_with("data/") && !f.starts_with("versions/"))
            continue;
        if (!fs::exists(origin / f))
            problems.push_back(f + ": not at the origin");
        else if (read_file(view / f) != read_file(origin / f))
            problems.push_back(f + ": differs from the origin's");
    }
    auto published = [&](std::string const& id) { return fs::exists(view / "versions" / id / "version.json"); };
    if (fs::exists(view / "versions"))
        for (auto const& folder : fs::directory_iterator(view / "versions")) {
            std::string id = folder.path().filename().string();
            if (!published(id))
                continue;
            for (auto const& f : files_under(origin / "versions" / id))
                if (!fs::exists(folder.path() / f))
                    problems.push_back("versions/" + id + "/" + f + ": missing from a published version");
            auto index = boost::json::parse(read_file(origin / "versions" / id / "files.json")).as_object();
            for (auto const& [table, entry] : index.at("tables").as_object())
                for (auto const& file : entry.as_object().at("files").as_array()) {
                    std::string data = "data/" + std::string(file.as_object().at("path").as_string());
                    if (!fs::exists(view / data))
                        problems.push_back(data + ": missing, needed by published " + id);
                }
        }
    for (auto const& ref : files_under(view / "refs"))
        if (!published(ref_of(view, "refs/" + ref)))
            problems.push_back("refs/" + ref + ": names a version without version.json");
    if (fs::exists(view / "refs.json")) {
        auto refs = boost::json::parse(read_file(view / "refs.json")).as_object();
        for (auto const& [name, id] : refs.at("refs").as_object())
            if (!published(std::string(id.as_string())))
                problems.push_back("refs.json: " + std::string(name) + " names a version without version.json");
    }
    if (fs::exists(view / "HEAD")) {
        std::string head = read_file(view / "HEAD");
        if (!head.starts_with("ref: ") || !fs::exists(view / head.substr(5, head.find('\n') - 5)))
            problems.push_back("HEAD: " + head + " names no ref in the mirror");
    }
    return problems;
}

/// A request for messages: "PUT /mirror/p/fdl.json".
inline std::string shown(recorded_request const& r) { return r.method + " " + r.target; }

inline std::string lines(std::vector<std::string> const& all) {
    std::string out;
    for (auto const& line : all)
        out += line + "\n";
    return out;
}

/// curl, so that the proxy's own test does not depend on the client under test: its exit
/// code (0, 18 partial body, 28 timeout, 52 empty reply, 56 reset) and stdout (with -i,
/// the response head then the body).
inline command_output curl(std::string const& args) {
    return run_shell("curl -s --max-time 10 " + args + " 2>/dev/null");
}

/// The body of a `curl -i` output.
inline std::string body_of(std::string const& out) {
    auto end = out.find("\r\n\r\n");
    return end == std::string::npos ? "" : out.substr(end + 4);
}

/// Publishes on the origin a new main version with a new data file; returns its id.
inline std::string add_main_version(publisher& p, sample_repo const& sample) {
    p.add_data_file("main/population/ducklake-0005.parquet", std::string(2500, 'e'));
    version_options next;
    next.parent = sample.main.back();
    next.data_files = {"main/population/ducklake-0002.parquet", "main/population/ducklake-0005.parquet"};
    next.message = "fifth";
    auto id = p.add_version(next);
    p.set_branch("main", id);
    p.write_refs_json();
    return id;
}

} // namespace mirror::test
