#include "daemon/cli/manifest_spill.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace mirror::daemon {

namespace {

/// $TMPDIR if set to an absolute path, else /tmp.
std::string temporary_folder() {
    char const* given = std::getenv("TMPDIR");
    if (given && given[0] == '/')
        return given;
    return "/tmp";
}

} // namespace

std::unique_ptr<manifest_spill> manifest_spill::create(formatter format, std::string separator, std::string& problem) {
    std::string folder = temporary_folder();
    // O_TMPFILE: the file has no name at all, so nothing is left behind whatever ends the
    // process; mkstemp and unlink where the file system cannot do that.
    int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::string name = folder + "/fdl-mirror-manifest-XXXXXX";
        fd = ::mkostemp(name.data(), O_CLOEXEC);
        if (fd >= 0)
            ::unlink(name.c_str());
    }
    if (fd < 0) {
        problem = "cannot make a temporary file in " + folder + ": " + std::strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<manifest_spill>(new manifest_spill(fd, std::move(format), std::move(separator)));
}

manifest_spill::manifest_spill(int fd, formatter format, std::string separator)
    : fd_(fd), format_(std::move(format)), separator_(std::move(separator)) {}

manifest_spill::~manifest_spill() { ::close(fd_); }

bool manifest_spill::take(std::string const& version_id, std::vector<sync::audited_file> const& entries) {
    if (taken_.contains(version_id))
        return false;
    std::string text;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i > 0)
            text += separator_;
        text += format_(entries[i]);
    }
    for (std::size_t written = 0; written < text.size();) {
        ssize_t n = ::pwrite(fd_, text.data() + written, text.size() - written,
                             static_cast<off_t>(end_ + written));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false; // nothing recorded: the next version writes over what was written
        written += static_cast<std::size_t>(n);
    }
    taken_.emplace(version_id, extent{end_, text.size()});
    end_ += text.size();
    return true;
}

bool manifest_spill::holds(std::string const& version_id) const { return taken_.contains(version_id); }

bool manifest_spill::copy(std::string const& version_id, text_out const& out, std::string& problem) const {
    auto found = taken_.find(version_id);
    if (found == taken_.end())
        return true;
    std::string piece;
    for (std::uint64_t done = 0; done < found->second.length;) {
        piece.resize(static_cast<std::size_t>(std::min<std::uint64_t>(found->second.length - done, 64 * 1024)));
        ssize_t n = ::pread(fd_, piece.data(), piece.size(), static_cast<off_t>(found->second.offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            problem = "the manifest of version " + version_id + " cannot be read back from its temporary file: " +
                      (n == 0 ? std::string("it is shorter than written") : std::string(std::strerror(errno)));
            return false;
        }
        out(std::string_view(piece.data(), static_cast<std::size_t>(n)));
        done += static_cast<std::uint64_t>(n);
    }
    return true;
}

} // namespace mirror::daemon
