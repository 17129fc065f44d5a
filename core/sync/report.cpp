#include "core/sync/report.hpp"

#include "core/io/errors.hpp"

namespace mirror::sync {

sync_observer::~sync_observer() = default;

problem_subject subject_of(error const& problem) {
    std::string_view text = problem.message;
    for (std::string_view side : {"origin: ", "mirror: "})
        if (text.starts_with(side))
            text.remove_prefix(side.size());
    problem_subject out;
    auto const object = text.substr(0, text.find(": "));
    if (object.starts_with("refs/")) {
        out.ref = std::string(object);
    } else if (object.starts_with("versions/")) {
        auto id = object.substr(9);
        out.version = std::string(id.substr(0, id.find('/')));
    } else if (object.starts_with("HEAD")) {
        out.ref = "HEAD";
    }
    return out;
}

bool is_io_failure(boost::system::error_code const& code) noexcept {
    using io::store_errc;
    return code == store_errc::transient || code == store_errc::io_error || code == store_errc::access_denied ||
           code == store_errc::unsupported;
}

int sync_report::exit_code() const {
    // A pass stopped by a store (an origin without fdl.json, a full disk) is an I/O failure;
    // one stopped by a refusal (another repository's id) is a content failure.
    if (io_failure || (fatal && fatal->code.category() == io::store_category() &&
                       fatal->code != io::store_errc::too_large))
        return 3;
    if (fatal || !held.empty() || !violations.empty() || !published_with_problems.empty() ||
        !unverified.empty())
        return 1;
    return 0;
}

} // namespace mirror::sync
