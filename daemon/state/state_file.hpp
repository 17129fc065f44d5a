#pragma once
// What the daemon remembers across restarts: one small JSON file per repository under
// `<state_dir>/repositories/`. It is only an optimisation. A lost or damaged file costs
// extra reads (unconditional GETs, an immediate first pass), never a wrong mirror: every
// pass checks the origin again, and a remembered object is served only on the origin's
// own 304 for the validator remembered with it.

#include "core/coord/pause.hpp"
#include "core/store/remembered_object.hpp"
#include "daemon/state/mirror_lock.hpp"
#include "daemon/state/pass_record.hpp"
#include "verify/error.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::daemon {

/// One repository's memory. Times are unix seconds.
struct repository_state {
    std::optional<double> last_success; ///< when the last pass that succeeded ended
    std::optional<double> last_attempt; ///< when the last pass started
    unsigned consecutive_failures = 0;  ///< failed passes since the last success (backoff)
    /// When the first of those failed passes started; unset while the last pass succeeded.
    /// Kept across restarts so that FdlMirrorPassesFailing fires whatever the backoff.
    std::optional<double> failing_since;
    /// When this repository was first configured on this host (the first start or reload
    /// that had it): /readyz's grace for a first pass counts from here, not from each
    /// restart, so a repository that never completed a pass stays "not ready".
    std::optional<double> configured_since;
    /// The operator's pause (`fdl-mirror pause`) as the last poll read it from the mirror:
    /// kept here so that `status` shows it without reading the mirror.
    std::optional<coord::pause_record> paused;
    /// The origin origin_cache was read from (its store's describe()). Restore the cache
    /// only into a store of the same origin: another server's Last-Modified dates could
    /// answer 304 for bytes it never served.
    std::string origin;
    std::vector<store::remembered_object> origin_cache; ///< http_store::remembered_objects()
    pass_record record; ///< what the last passes found (status, clocks)

    friend bool operator==(repository_state const&, repository_state const&) = default;
};

/// The file name (in `repositories/`) of a repository's state, whatever its name: bytes
/// outside [A-Za-z0-9._-], '%' and a leading '.' are percent-encoded, so the name is never
/// "", "." or "..", holds no '/', and never starts with '.' (temporary files do). "" is
/// "%.json". A name whose encoding passes 150 bytes is cut and ends with '~' and part of
/// its SHA-256 (file names stop at 255 bytes). Distinct names give distinct files.
std::string state_file_name(std::string_view repo_name);

/// The daemon's state folder. Its calls block on the file system (save() fsyncs twice):
/// call them where a pause of a few milliseconds is acceptable. Not thread-safe. One
/// daemon per folder: an open state_dir (and its copies) holds a lock on `root/lock`.
class state_dir {
public:
    /// Opens `root`, creating `root/repositories` if missing, and checks that a file can
    /// be created there (by creating one). Removes temporary files a crash left behind.
    /// Fails with store_errc::access_denied or io_error, naming the folder and the reason,
    /// and with store_errc::transient while another state_dir holds the folder (another
    /// daemon, or another open in this process): two daemons would overwrite each
    /// other's files and restore each other's remembered objects.
    static result<state_dir> open(std::filesystem::path root);

    std::filesystem::path const& root() const { return root_; }
    /// Where `repo_name`'s state is kept.
    std::filesystem::path file_of(std::string_view repo_name) const;

    /// The remembered state of `repo_name`. A missing file is an empty state and no
    /// warning. An unreadable or damaged one (not JSON, another format version, another
    /// repository's, a field of the wrong type, bytes that do not match their SHA-256) is
    /// an empty state, and `*warning` (when not null) names the file and the reason.
    repository_state load(std::string const& repo_name, std::string* warning) const;
    /// load() of the state folder at `root` without opening it (no lock, nothing made or
    /// removed): for `status`, which reads while the daemon runs. Each file is replaced
    /// whole by a rename, so it is read whole, old or new.
    static repository_state peek(std::filesystem::path const& root, std::string const& repo_name,
                                 std::string* warning);

    /// Replaces the state of `repo_name` atomically: a temporary file in the same folder,
    /// fsync, rename over the old file, fsync of the folder. On failure the old file is
    /// intact and no temporary file is left; the error (store_errc::access_denied or
    /// io_error) names the file and the reason.
    result<void> save(std::string const& repo_name, repository_state const& state) const;

    /// Deletes the state of `repo_name` (a repository no longer configured). A missing
    /// file, or one that cannot be deleted, is left as it is: it is only an optimisation.
    void forget(std::string const& repo_name) const;

private:
    state_dir(std::filesystem::path root, std::shared_ptr<mirror_lock const> lock)
        : root_(std::move(root)), lock_(std::move(lock)) {}
    std::filesystem::path root_;
    std::shared_ptr<mirror_lock const> lock_; ///< released with the last copy
};

} // namespace mirror::daemon
