#pragma once
// What a mirror holds now, as an attestation speaks of it: its fdl.json, its refs, and the
// version.json of each version it publishes, each by its sha256. Read by the daemon to
// attest a mirror and by a consumer to compare a mirror with its attestation.

#include "core/fdl/refs.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mirror::attest {

struct mirror_state {
    std::string fdl_json_sha256;
    std::optional<std::string> repository_id; ///< fdl.json's `id`, when it has one
    fdl::ref_map refs;
    std::vector<error> refused_refs; ///< refs whose name or content no reader accepts
    /// Where refs/ can be listed: how refs.json (what readers over HTTP go by) disagrees
    /// with it, or that it is missing.
    std::vector<std::string> refs_json_problems;
    /// Every version whose folder holds version.json: id -> its sha256.
    std::map<std::string, std::string, std::less<>> versions;
    /// The first parent of each version read here (not of those taken from `known`), ""
    /// for a root version or a record that does not parse.
    std::map<std::string, std::string, std::less<>> first_parents;
};

/// What a version's record says for a comparison: its sha256, and its first parent ("" for
/// a root version, or a record that does not parse).
struct record_facts {
    std::string sha256;
    std::string first_parent;
};
awaitable<result<record_facts>> read_record_facts(store::store& from, std::string id);

/// Reads `mirror`'s state: fdl.json, the refs (through refs/), the listing of versions/,
/// and the version.json of each published version, `concurrency` at once. A version in
/// `known` (id -> sha256, remembered from an earlier read) is taken from there unless a
/// ref names it: the refs' targets are read each time, so that one changed under a ref is
/// seen. A store that cannot list (a mirror served over HTTP(S)) has its refs read through
/// refs.json, and for versions the refs' targets and `expected`, each one absent left out.
/// Fails on the first read that fails (a store error, or fdl.json missing).
awaitable<result<mirror_state>> read_mirror_state(store::store& mirror, std::size_t concurrency,
                                                  std::map<std::string, std::string, std::less<>> const* known = nullptr,
                                                  std::vector<std::string> const* expected = nullptr);

} // namespace mirror::attest
