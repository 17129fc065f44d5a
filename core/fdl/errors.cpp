#include "core/fdl/errors.hpp"

namespace mirror::fdl {

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "fdl"; }
    std::string message(int value) const override {
        switch (static_cast<fdl_errc>(value)) {
        case fdl_errc::bad_json: return "malformed JSON";
        case fdl_errc::missing_field: return "missing field";
        case fdl_errc::wrong_type: return "wrong type";
        case fdl_errc::bad_value: return "invalid value";
        case fdl_errc::unknown_major_version: return "unknown major version";
        case fdl_errc::bad_version_id: return "not a version id";
        case fdl_errc::id_mismatch: return "id mismatch";
        case fdl_errc::bad_path: return "unsafe path";
        case fdl_errc::bad_ref_name: return "bad ref name";
        case fdl_errc::too_large: return "too large";
        }
        return "unknown fdl error";
    }
};
} // namespace

boost::system::error_category const& fdl_category() noexcept {
    static category const instance; // function-local: no static constructor at startup
    return instance;
}

} // namespace mirror::fdl
