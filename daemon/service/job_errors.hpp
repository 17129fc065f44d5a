#pragma once
// Why a repository job's pass ended before the sync engine could report: outcomes of the
// daemon's own, with kinds of their own (`job.origin_unavailable`, docs/cli.md, "Kinds of
// problems"), rather than a store's I/O error they are not.

#include <boost/system/error_code.hpp>
#include <type_traits>

namespace mirror::daemon {

enum class job_errc {
    origin_unavailable = 1, ///< the origin's store could not be opened (its location, credentials, a folder gone)
    mirror_unavailable,     ///< the mirror's store could not be opened
    lease_refused,          ///< the mirror's lease could not be judged or taken: nothing was written
    pass_cut,               ///< the pass ran past pass_timeout (or stopped on an internal error) and was cut
};

boost::system::error_category const& job_category() noexcept;

inline boost::system::error_code make_error_code(job_errc e) noexcept {
    return {static_cast<int>(e), job_category()};
}

} // namespace mirror::daemon

template <>
struct boost::system::is_error_code_enum<mirror::daemon::job_errc> : std::true_type {};
