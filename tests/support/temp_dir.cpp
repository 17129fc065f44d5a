#include "tests/support/temp_dir.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace mirror::test {

temp_dir::temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fdl-mirror-test.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("cannot create a temporary folder");
    path_ = pattern;
}

temp_dir::~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

} // namespace mirror::test
