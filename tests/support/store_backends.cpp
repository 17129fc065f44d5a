#include "tests/support/store_backends.hpp"

#include "core/coord/fenced_store.hpp"
#include "core/store/fault_store.hpp"
#include "core/store/open_store.hpp"
#include "tests/support/publisher.hpp"

#include <stdexcept>

namespace mirror::test {

namespace fs = std::filesystem;

namespace {

/// Opens `location` or throws: a backend that cannot open is a broken fixture, not a
/// failed contract.
std::unique_ptr<store::store> open_or_throw(std::string const& location, store::store_role role,
                                            io::blocking_pool* pool, store::store_options const& options) {
    auto opened = store::open_store(location, role, pool, options);
    if (!opened)
        throw std::runtime_error("cannot open " + location + ": " + opened.error().message);
    return std::move(*opened);
}

void seed_file(fs::path const& parent, std::string const& path, std::string const& bytes) {
    fs::create_directories((parent / path).parent_path());
    write_file(parent / path, bytes);
}

std::optional<std::string> peek_file(fs::path const& parent, std::string const& path) {
    std::error_code ec;
    if (!fs::is_regular_file(parent / path, ec))
        return std::nullopt;
    return read_file(parent / path);
}

std::map<std::string, std::uint64_t> files_with_sizes(fs::path const& parent) {
    std::map<std::string, std::uint64_t> out;
    for (auto const& entry : fs::recursive_directory_iterator(parent))
        if (entry.is_regular_file())
            out[fs::relative(entry.path(), parent).generic_string()] = entry.file_size();
    return out;
}

template <class T>
T value_or_throw(result<T> r, std::string const& what) {
    if (!r)
        throw std::runtime_error(what + ": " + r.error().message);
    return std::move(*r);
}

void check_or_throw(result<void> r, std::string const& what) {
    if (!r)
        throw std::runtime_error(what + ": " + r.error().message);
}

} // namespace

store_backend::~store_backend() = default;

// A folder: the parent is tmp/parent, the store's root tmp/parent/root.

folder_backend::folder_backend(bool writable) : writable_(writable) {
    // An origin folder must exist; a mirror's is created by open_store.
    if (!writable)
        fs::create_directories(tmp_ / "parent" / "root");
    auto role = writable ? store::store_role::mirror : store::store_role::origin;
    store_ = open_or_throw((tmp_ / "parent" / "root").string(), role, &pool_, {});
}

std::string folder_backend::expected_location() const { return (tmp_ / "parent" / "root").string(); }

void folder_backend::seed(std::string const& path, std::string const& bytes) {
    seed_file(tmp_ / "parent", path, bytes);
}

std::optional<std::string> folder_backend::peek(std::string const& path) { return peek_file(tmp_ / "parent", path); }

std::map<std::string, std::uint64_t> folder_backend::objects() { return files_with_sizes(tmp_ / "parent"); }

// HTTPS: nginx serves tmp/parent at "/", the store's root is "/root/".

https_backend::https_backend() : tls_(make_test_ca(tmp_ / "tls")) {
    fs::create_directories(tmp_ / "parent" / "root");
    nginx_ = std::make_unique<nginx_server>(nginx_options{tmp_ / "parent", tls_.server_cert, tls_.server_key, ""});
    store::store_options options;
    options.ca_bundle = tls_.ca_cert;
    store_ = open_or_throw(nginx_->url() + "root/", store::store_role::origin, nullptr, options);
}

std::string https_backend::expected_location() const { return nginx_->url() + "root/"; }

void https_backend::seed(std::string const& path, std::string const& bytes) { seed_file(tmp_ / "parent", path, bytes); }

std::optional<std::string> https_backend::peek(std::string const& path) { return peek_file(tmp_ / "parent", path); }

std::map<std::string, std::uint64_t> https_backend::objects() { return files_with_sizes(tmp_ / "parent"); }

// S3: the parent is the bucket "conformance", the store's root its prefix "root/".

namespace {
/// Rates high enough not to slow the suite, so that every call goes through the throttle.
std::shared_ptr<store::throttle> generous_limits() {
    return std::make_shared<store::throttle>(store::rate_limits{10'000.0, std::uint64_t{1} << 30});
}
} // namespace

s3rver_backend::s3rver_backend(wrapping wrap) {
    write_file(tmp_ / "s3-credentials", "access_key_id = " + std::string(s3rver_server::access_key_id) +
                                            "\nsecret_access_key = " + std::string(s3rver_server::secret_access_key) +
                                            "\n");
    store::store_options options;
    options.allow_plain_http = true; // s3rver listens on plain http, on loopback
    options.s3.endpoint = server_.endpoint();
    options.s3.region = std::string(s3rver_server::region);
    options.s3.addressing = "path";
    options.s3.credentials_file = tmp_ / "s3-credentials";
    bucket_ = open_or_throw("s3://conformance/", store::store_role::mirror, nullptr, options);
    if (wrap == wrapping::throttled)
        options.limits = generous_limits();
    store_ = open_or_throw("s3://conformance/root/", store::store_role::mirror, nullptr, options);
}

namespace {

void seed_bucket(event_loop& run_on, store::store& bucket, std::string const& path, std::string const& bytes) {
    check_or_throw(run_on(store::write_all(bucket, path, bytes, store::write_mode::replace)), "seeding " + path);
}

std::optional<std::string> peek_bucket(event_loop& run_on, store::store& bucket, std::string const& path) {
    return value_or_throw(run_on(store::read_if_present(bucket, path, 64 * 1024 * 1024)), "peeking at " + path);
}

std::map<std::string, std::uint64_t> bucket_objects(event_loop& run_on, store::store& bucket) {
    std::map<std::string, std::uint64_t> out;
    // A named std::function, never a lambda converted in the call (docs/design.md, GCC 12).
    std::function<result<void>(store::list_entry)> note = [&](store::list_entry e) -> result<void> {
        out[e.key] = e.size;
        return {};
    };
    auto listed = run_on(bucket.list("", note));
    check_or_throw(std::move(listed), "listing the bucket");
    return out;
}

} // namespace

void s3rver_backend::seed(std::string const& path, std::string const& bytes) {
    seed_bucket(run_on, *bucket_, path, bytes);
}

std::optional<std::string> s3rver_backend::peek(std::string const& path) { return peek_bucket(run_on, *bucket_, path); }

std::map<std::string, std::uint64_t> s3rver_backend::objects() { return bucket_objects(run_on, *bucket_); }

// RGW: the parent is a bucket of this backend's own on the process's cluster.

rgw_backend::rgw_backend(wrapping wrap) {
    auto& server = rgw_server::shared();
    bucket_name_ = server.create_bucket("conformance");
    store::store_options options;
    options.allow_plain_http = true; // RGW listens on plain http, on loopback
    options.s3.endpoint = server.endpoint();
    options.s3.region = server.region();
    options.s3.addressing = "path";
    options.s3.credentials_file = server.credentials_file();
    bucket_ = open_or_throw("s3://" + bucket_name_ + "/", store::store_role::mirror, nullptr, options);
    if (wrap == wrapping::fenced) {
        lease_bucket_ = open_or_throw("s3://" + server.create_bucket("lease") + "/", store::store_role::mirror,
                                      nullptr, options);
        coord::lease_settings settings;
        settings.duration = std::chrono::hours(1); // the suite never waits for a renewal
        lease_ = std::make_unique<coord::lease>(*lease_bucket_, "conformance/1", settings);
        auto taken = run_on(lease_->acquire_or_renew());
        if (!taken || *taken != coord::lease_change::taken)
            throw std::runtime_error("the conformance lease was not taken");
    }
    // The daemon fences the store it opened, rate limits and all: fenced over throttled.
    if (wrap == wrapping::throttled || wrap == wrapping::fenced)
        options.limits = generous_limits();
    store_ = open_or_throw("s3://" + bucket_name_ + "/root/", store::store_role::mirror, nullptr, options);
    subject_ = store_.get();
    if (wrap == wrapping::faulted) // a fault that never comes: every call just goes through
        wrapper_ = std::make_unique<store::fault_store>(*store_, ~std::uint64_t{0}, store::fault_action::fail);
    if (wrap == wrapping::fenced)
        wrapper_ = std::make_unique<coord::fenced_store>(*store_, *lease_, std::chrono::seconds(1));
    if (wrapper_)
        subject_ = wrapper_.get();
}

rgw_backend::~rgw_backend() = default;

void rgw_backend::seed(std::string const& path, std::string const& bytes) { seed_bucket(run_on, *bucket_, path, bytes); }

std::optional<std::string> rgw_backend::peek(std::string const& path) { return peek_bucket(run_on, *bucket_, path); }

std::map<std::string, std::uint64_t> rgw_backend::objects() { return bucket_objects(run_on, *bucket_); }

std::optional<std::string> memory_backend::peek(std::string const& path) {
    auto found = bucket_->objects.find(path);
    if (found == bucket_->objects.end())
        return std::nullopt;
    return found->second.bytes;
}

std::map<std::string, std::uint64_t> memory_backend::objects() {
    std::map<std::string, std::uint64_t> out;
    for (auto const& [key, object] : bucket_->objects)
        out[key] = object.bytes.size();
    return out;
}

} // namespace mirror::test
