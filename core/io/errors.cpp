#include "core/io/errors.hpp"

namespace mirror::io {

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "store"; }
    std::string message(int value) const override {
        switch (static_cast<store_errc>(value)) {
        case store_errc::not_found: return "not found";
        case store_errc::already_exists: return "already exists";
        case store_errc::access_denied: return "access denied";
        case store_errc::transient: return "transient failure";
        case store_errc::rejected: return "rejected";
        case store_errc::not_a_file: return "not a regular file";
        case store_errc::conflict: return "changed by another writer";
        case store_errc::unsupported: return "not supported";
        case store_errc::io_error: return "I/O error";
        case store_errc::too_large: return "too large";
        }
        return "unknown store error";
    }
};
} // namespace

boost::system::error_category const& store_category() noexcept {
    static category const instance;
    return instance;
}

bool is_retryable(boost::system::error_code const& code) noexcept {
    return code == store_errc::transient;
}

} // namespace mirror::io
