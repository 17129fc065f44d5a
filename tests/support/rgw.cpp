#include "tests/support/rgw.hpp"

#include "tests/support/local_servers.hpp"

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

// tests/CMakeLists.txt sets it: the source tree's scripts/deps/rgw/start-rgw.sh.
#ifndef FDL_MIRROR_RGW_START_SCRIPT
#define FDL_MIRROR_RGW_START_SCRIPT ""
#endif

namespace mirror::test {

namespace fs = std::filesystem;

namespace {

std::string shell_quoted(std::string const& s) {
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// The value of `NAME=value` in the script's output, or "".
std::string field(std::string const& printed, std::string const& name) {
    std::istringstream lines(printed);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with(name + "="))
            return line.substr(name.size() + 1);
    return {};
}

} // namespace

rgw_server& rgw_server::shared() {
    // Destroyed at exit, after the tests: stops the cluster.
    static std::unique_ptr<rgw_server> server(new rgw_server());
    return *server;
}

rgw_server::rgw_server() { start(); }

void rgw_server::start() {
    if (find_program("radosgw", "/usr/bin/radosgw").empty() || find_program("ceph-mon", "/usr/bin/ceph-mon").empty())
        throw std::runtime_error("radosgw and ceph-mon are not installed: run scripts/setup");
    std::string const script = FDL_MIRROR_RGW_START_SCRIPT;
    // A free port is picked by binding and releasing it: another process can take it in
    // between, so a failed start is tried once more in a fresh folder.
    command_output started;
    for (int attempt = 0; attempt < 2; ++attempt) {
        fs::path const base = root_ / ("cluster-" + std::to_string(attempt));
        started = run_shell("BASE=" + shell_quoted(base.string()) + " bash " + shell_quoted(script) + " 2>" +
                            shell_quoted((root_ / ("start-" + std::to_string(attempt) + ".log")).string()));
        stop_script_ = (base / "stop-rgw.sh").string();
        if (started.exit_code == 0 && !field(started.out, "S3_ENDPOINT").empty())
            break;
        run_shell("bash " + shell_quoted(stop_script_) + " >/dev/null 2>&1");
    }
    if (started.exit_code != 0 || field(started.out, "S3_ENDPOINT").empty())
        throw std::runtime_error("Ceph RGW did not start: " + read_text(root_ / "start-1.log"));
    endpoint_ = field(started.out, "S3_ENDPOINT");
    access_key_ = field(started.out, "S3_ACCESS_KEY");
    secret_key_ = field(started.out, "S3_SECRET_KEY");
    conf_ = field(started.out, "CEPH_CONF");
    std::ofstream(credentials_file()) << "access_key_id = " << access_key_ << "\nsecret_access_key = " << secret_key_
                                      << "\n";
}

rgw_server::~rgw_server() {
    if (!stop_script_.empty())
        run_shell("bash " + shell_quoted(stop_script_) + " >/dev/null 2>&1");
}

std::uint16_t rgw_server::port() const {
    return static_cast<std::uint16_t>(std::stoul(endpoint_.substr(endpoint_.rfind(':') + 1)));
}

std::string rgw_server::create_bucket(std::string const& prefix) {
    return make_bucket(prefix + "-" + std::to_string(++buckets_made_));
}

std::string rgw_server::fresh_bucket(std::string const& name) {
    run_shell("CEPH_CONF=" + shell_quoted(conf_) + " radosgw-admin bucket rm --bucket=" + shell_quoted(name) +
              " --purge-objects >/dev/null 2>&1"); // fails when there is none: fine
    return make_bucket(name);
}

std::string rgw_server::make_bucket(std::string const& name) {
    // curl signs with SigV4 itself (--aws-sigv4): no store of ours creates buckets. RGW
    // wants the payload's hash, which curl 7.88 does not send: the empty body's.
    auto made = run_shell("curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 -H 'x-amz-content-sha256: "
                          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' --user " +
                          shell_quoted(access_key_ + ":" + secret_key_) + " " + shell_quoted(endpoint_ + "/" + name) + " 2>&1");
    if (made.exit_code != 0)
        throw std::runtime_error("creating bucket " + name + " on RGW: " + made.out);
    return name;
}

std::string rgw_server::admin(std::string const& arguments) const {
    auto out = run_shell("CEPH_CONF=" + shell_quoted(conf_) + " radosgw-admin " + arguments + " 2>&1");
    if (out.exit_code != 0)
        throw std::runtime_error("radosgw-admin " + arguments + ": " + out.out);
    return out.out;
}

std::string rgw_server::log_tail() const {
    auto out = run_shell("tail -n 30 " + shell_quoted((fs::path(conf_).parent_path() / "run" / "client.rgw.log").string()));
    return out.out;
}

} // namespace mirror::test
