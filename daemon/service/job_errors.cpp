#include "daemon/service/job_errors.hpp"

namespace mirror::daemon {

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "job"; }
    // sync::kind_of makes the kinds from these: "job.origin_unavailable".
    std::string message(int value) const override {
        switch (static_cast<job_errc>(value)) {
        case job_errc::origin_unavailable: return "origin unavailable";
        case job_errc::mirror_unavailable: return "mirror unavailable";
        case job_errc::lease_refused: return "lease refused";
        case job_errc::pass_cut: return "pass cut";
        }
        return "unknown job error";
    }
};
} // namespace

boost::system::error_category const& job_category() noexcept {
    static category const instance;
    return instance;
}

} // namespace mirror::daemon
