#pragma once
// The mirror as a lease holder writes it: a store wrapper that lets a write start only
// while the repository's lease covers it with a margin, and makes every write of the refs
// (`refs/…`, `refs.json`, `HEAD`) conditional on the object this holder last read or
// wrote there. A holder that paused past its lease (between its check and its write) and
// finds that another holder moved a ref meanwhile fails with store_errc::conflict instead
// of moving it back.

#include "core/coord/lease.hpp"
#include "core/store/forwarding_store.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mirror::coord {

namespace st = mirror::store;

class fenced_store final : public st::forwarding_store {
public:
    /// `inner` needs caps().conditional_writes; `held` is read before each write.
    fenced_store(std::unique_ptr<st::store> inner, lease const& held, milliseconds margin);
    /// The same over a store that outlives this one.
    fenced_store(st::store& inner, lease const& held, milliseconds margin);
    ~fenced_store() override;

    /// A ref's bytes are read with their tag, which the next write of that ref names.
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override;
    awaitable<result<std::unique_ptr<st::object_writer>>> open_writer(std::string key,
                                                                         st::write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;
    awaitable<result<std::size_t>> discard_incomplete_writes() override;
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override;

    /// True for the keys whose writes are conditional: refs.json, HEAD, refs/….
    static bool is_ref_key(std::string_view key);
    /// nullopt while the lease covers a write; else why not, naming the lease.
    std::optional<error> fenced() const;
    /// Writes a ref conditionally and remembers its new tag (the ref writer's commit).
    awaitable<result<void>> write_ref(std::string key, std::string bytes, st::write_mode mode);

private:
    lease const& lease_;
    milliseconds margin_;
    /// Each ref key read or written: its tag, or nullopt when it was found absent.
    std::map<std::string, std::optional<std::string>, std::less<>> tags_;
};

} // namespace mirror::coord
