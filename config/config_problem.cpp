#include "config/config_problem.hpp"

#include <stdexcept>

namespace mirror::config {

std::string config_problem::text() const {
    if (line <= 0)
        return file + ": " + message;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

void throw_exception_from_error(config_problems const& problems, boost::source_location const&) {
    std::string all;
    for (auto const& problem : problems)
        all += (all.empty() ? "" : "\n") + problem.text();
    throw std::runtime_error(all.empty() ? std::string("the configuration has problems") : all);
}

} // namespace mirror::config
