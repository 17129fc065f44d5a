#pragma once
// Copying one object between stores, hashing while it streams, committing only after
// every check passed.

#include "verify/error.hpp"
#include "core/io/net.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "core/sync/report.hpp"
#include "verify/sha256.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::sync {

/// What the repository pins for an object; unset parts are not checked.
struct expectation {
    std::optional<std::uint64_t> bytes;
    std::optional<verify::sha256_digest> sha256;
    std::string pinned_by; ///< who pins it, for messages: "version.json", "files.json"
};

struct copy_outcome {
    std::uint64_t bytes = 0;
    verify::sha256_digest sha256{};
};

/// Copies `key` from `from` to the same key in `to`, streaming: bytes are hashed and
/// written through as they arrive, and a body longer than expected is cut off at once.
/// The object becomes visible in `to` only when size and digest match `expect`; otherwise
/// nothing appears under `key` and the error is sync_errc::{size_mismatch, sha256_mismatch}.
/// An origin object that is absent fails with sync_errc::missing_file, a link or special
/// file with sync_errc::not_a_regular_file; other store errors pass through.
/// Large chunks are hashed on `pool` when one is given, so that hashing one file overlaps
/// with reading and writing others. `mirror_failed` is set when the failure was the
/// mirror's (opening, writing or committing): that stops a pass, while the origin's holds
/// one version. It is the caller's named flag, and the call is awaited at once.
awaitable<result<copy_outcome>> copy_object(store::store& from, store::store& to, std::string key,
                                            expectation expect, store::write_mode mode, bool& mirror_failed,
                                            sync_observer* observer, io::blocking_pool* pool = nullptr);

/// Reads `key` from `from` and checks it against `expect` while it streams, writing
/// nothing. Fails like copy_object.
awaitable<result<copy_outcome>> hash_object(store::store& from, std::string key, expectation expect,
                                            io::blocking_pool* pool = nullptr);

/// Checks bytes already in memory against `expect`; `key` names them in the message.
result<void> check_bytes(std::string_view bytes, expectation const& expect, std::string const& key);

/// Maps a store failure onto what it says about the content: not_found becomes
/// sync_errc::missing_file, rejected (a link, a special file) not_a_regular_file.
error as_content_error(error e);

/// as_content_error, with the message saying it happened at the origin.
error origin_read_error(error e);

} // namespace mirror::sync
