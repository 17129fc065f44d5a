#include "verify/error.hpp"

#include <ostream>
#include <stdexcept>

namespace mirror {

error with_context(error e, std::string const& context) {
    e.message = context + ": " + e.message;
    return e;
}

std::ostream& operator<<(std::ostream& out, error const& e) {
    return out << e.message;
}

void throw_exception_from_error(error const& e, boost::source_location const&) {
    throw std::runtime_error(e.message);
}

} // namespace mirror
