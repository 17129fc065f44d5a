#pragma once
// verify's manifest of data files, spilled to a temporary file while the audit runs: the
// report of a repository of 100,000 data files then never holds 100,000 entries in memory,
// it copies each version's entries from the file when it writes that version.

#include "core/sync/audit.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace mirror::daemon {

/// Where a report is written, piece by piece, so that a large one is never whole in memory.
using text_out = std::function<void(std::string_view)>;

class manifest_spill final : public sync::manifest_sink {
public:
    /// An entry as the report writes it: a JSON object, or a line of the summary.
    using formatter = std::function<std::string(sync::audited_file const&)>;

    /// A spill in an unlinked temporary file in $TMPDIR (else /tmp), whose entries are
    /// written with `format` and joined by `separator`; nullptr with `problem` set when the
    /// file cannot be made.
    static std::unique_ptr<manifest_spill> create(formatter format, std::string separator, std::string& problem);
    ~manifest_spill() override;
    manifest_spill(manifest_spill const&) = delete;
    manifest_spill& operator=(manifest_spill const&) = delete;

    /// Writes the entries to the file; false (nothing taken) when the write fails, for
    /// example on a full disk: the version then keeps them in the report.
    bool take(std::string const& version_id, std::vector<sync::audited_file> const& entries) override;

    /// Whether the entries of `version_id` are in the file.
    bool holds(std::string const& version_id) const;

    /// Writes the entries of `version_id`, joined, to `out` in pieces of at most 64 KiB;
    /// false with `problem` set when the file cannot be read back.
    bool copy(std::string const& version_id, text_out const& out, std::string& problem) const;

    std::uint64_t bytes() const { return end_; } ///< written to the file so far

private:
    struct extent {
        std::uint64_t offset = 0;
        std::uint64_t length = 0;
    };
    manifest_spill(int fd, formatter format, std::string separator);

    int fd_;
    formatter format_;
    std::string separator_;
    std::map<std::string, extent, std::less<>> taken_;
    std::uint64_t end_ = 0;
};

} // namespace mirror::daemon
