#pragma once
// The backends the store conformance suite runs against (docs/development.md, "Stores":
// one suite, every backend): each opens its store at "root/" below a parent location it can also reach
// behind the store's back, to put objects there and to see what is really there.

#include "core/coord/lease.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "tests/support/memory_store.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/rgw.hpp"
#include "tests/support/run.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_ca.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mirror::test {

/// One backend under test. Paths given to seed/peek/objects are relative to the parent
/// location: "root/k" is the store's key "k", and "x" is outside the store's root (what
/// a hostile key like "../x" would reach). Objects in the parent are made and read
/// without the store under test (files on disk, or a second store at the bucket's top).
/// Runs its coroutines on `run_on`, which outlives the stores (declared in this base).
class store_backend {
public:
    virtual ~store_backend();

    /// The store under test, rooted at the parent's "root/".
    virtual store::store& subject() = 0;
    /// What this backend must declare; the suite checks caps() against it.
    virtual store::store_caps expected_caps() const = 0;
    /// Text that describe() must contain: the folder, URL or bucket and prefix.
    virtual std::string expected_location() const = 0;
    /// Puts `bytes` at `path` below the parent, replacing what is there.
    virtual void seed(std::string const& path, std::string const& bytes) = 0;
    /// The bytes at `path` below the parent, or nullopt when there is no object.
    virtual std::optional<std::string> peek(std::string const& path) = 0;
    /// Every object below the parent, with its size.
    virtual std::map<std::string, std::uint64_t> objects() = 0;

    /// Whether the server refuses a create-only write to a taken key. Not a caps()
    /// matter: the store sends If-None-Match: *, but s3rver 3.7.1 ignores it on PUT
    /// (docs/design.md, "s3rver").
    virtual bool server_honours_create_only() const { return true; }
    /// Whether remove() of a missing key is not_found. S3 answers 204 to either, and
    /// docs/mirroring-rules.md documents it: "A delete of a missing key succeeds".
    virtual bool remove_reports_missing() const { return true; }
    /// Whether the server refuses a conditional write whose condition does not hold
    /// (If-Match, If-None-Match on PUT): s3rver 3.7.1 ignores both, as create_only.
    virtual bool server_honours_conditions() const { return server_honours_create_only(); }

    event_loop run_on;
};

/// A local folder opened through open_store, its file I/O on a pool: as a mirror
/// (writable, can list, create-only) or as an origin (read-only, can list).
class folder_backend : public store_backend {
public:
    store::store& subject() override { return *store_; }
    store::store_caps expected_caps() const override { return {true, writable_, writable_}; }
    std::string expected_location() const override;
    void seed(std::string const& path, std::string const& bytes) override;
    std::optional<std::string> peek(std::string const& path) override;
    std::map<std::string, std::uint64_t> objects() override;

protected:
    explicit folder_backend(bool writable);

private:
    bool writable_;
    temp_dir tmp_;
    io::blocking_pool pool_{2};
    std::unique_ptr<store::store> store_;
};

class folder_mirror_backend final : public folder_backend {
public:
    folder_mirror_backend() : folder_backend(true) {}
};

class folder_origin_backend final : public folder_backend {
public:
    folder_origin_backend() : folder_backend(false) {}
};

/// tests/support/memory_store at "root/" of a bucket in memory, which seed and peek reach
/// directly: the store the daemon's unit tests use, held to the same contracts.
class memory_backend final : public store_backend {
public:
    store::store& subject() override { return store_; }
    store::store_caps expected_caps() const override { return {true, true, true, true}; }
    std::string expected_location() const override { return "mem://memory/root/"; }
    void seed(std::string const& path, std::string const& bytes) override { bucket_->put(path, bytes); }
    std::optional<std::string> peek(std::string const& path) override;
    std::map<std::string, std::uint64_t> objects() override;

private:
    std::shared_ptr<memory_bucket> bucket_ = std::make_shared<memory_bucket>();
    memory_store store_{bucket_, "root/"};
};

/// nginx serving the parent folder over HTTPS with a test CA; the store is opened
/// through open_store at "https://localhost:PORT/root/" as an origin: read-only, no list.
class https_backend final : public store_backend {
public:
    https_backend();
    store::store& subject() override { return *store_; }
    store::store_caps expected_caps() const override { return {false, false, false}; }
    std::string expected_location() const override;
    void seed(std::string const& path, std::string const& bytes) override;
    std::optional<std::string> peek(std::string const& path) override;
    std::map<std::string, std::uint64_t> objects() override;

private:
    temp_dir tmp_;
    tls_files tls_;
    std::unique_ptr<nginx_server> nginx_;
    std::unique_ptr<store::store> store_;
};

/// s3rver with one bucket; the store is opened through open_store at
/// "s3://conformance/root/" (endpoint, path-style addressing and a credentials file in
/// store_options), and a second store at "s3://conformance/" seeds and inspects the bucket.
/// How the daemon may wrap a mirror store, for the suite to run over each (issue 33):
/// open_store with rate limits (throttled_store), the crash tests' fault_store, and a
/// lease holder's fenced_store over a throttled store (as the daemon stacks them).
enum class wrapping { none, throttled, faulted, fenced };

class s3rver_backend : public store_backend {
public:
    explicit s3rver_backend(wrapping wrap = wrapping::none);
    store::store& subject() override { return *store_; }
    store::store_caps expected_caps() const override { return {true, true, true, true}; }
    std::string expected_location() const override { return "s3://conformance/root/"; }
    void seed(std::string const& path, std::string const& bytes) override;
    std::optional<std::string> peek(std::string const& path) override;
    std::map<std::string, std::uint64_t> objects() override;
    bool server_honours_create_only() const override { return false; }
    bool remove_reports_missing() const override { return false; }

    /// s3rver's log, for a failing test's INFO.
    std::string log() const { return server_.log(); }

private:
    temp_dir tmp_;
    s3rver_server server_{{.buckets = {"conformance"}}};
    std::unique_ptr<store::store> bucket_;
    std::unique_ptr<store::store> store_;
};

class throttled_s3rver_backend final : public s3rver_backend {
public:
    throttled_s3rver_backend() : s3rver_backend(wrapping::throttled) {}
};

/// Ceph RGW (the process's cluster, rgw_server::shared()) with a bucket of this backend's
/// own; the store is opened at "s3://BUCKET/root/" with path-style addressing, and a second
/// store at "s3://BUCKET/" seeds and inspects the bucket. RGW honours create-only writes.
class rgw_backend : public store_backend {
public:
    explicit rgw_backend(wrapping wrap = wrapping::none);
    ~rgw_backend() override;
    store::store& subject() override { return *subject_; }
    store::store_caps expected_caps() const override { return {true, true, true, true}; }
    std::string expected_location() const override { return "s3://" + bucket_name_ + "/root/"; }
    void seed(std::string const& path, std::string const& bytes) override;
    std::optional<std::string> peek(std::string const& path) override;
    std::map<std::string, std::uint64_t> objects() override;
    bool remove_reports_missing() const override { return false; } // S3 answers 204 to either

private:
    std::string bucket_name_;
    std::unique_ptr<store::store> bucket_;
    std::unique_ptr<store::store> store_;
    /// fenced: the lease, held in a bucket of its own so that the suite sees no object of it.
    std::unique_ptr<store::store> lease_bucket_;
    std::unique_ptr<coord::lease> lease_;
    std::unique_ptr<store::store> wrapper_; ///< the fault or fenced store over store_
    store::store* subject_ = nullptr;
};

class throttled_rgw_backend final : public rgw_backend {
public:
    throttled_rgw_backend() : rgw_backend(wrapping::throttled) {}
};

class faulted_rgw_backend final : public rgw_backend {
public:
    faulted_rgw_backend() : rgw_backend(wrapping::faulted) {}
};

class fenced_rgw_backend final : public rgw_backend {
public:
    fenced_rgw_backend() : rgw_backend(wrapping::fenced) {}
};

} // namespace mirror::test
