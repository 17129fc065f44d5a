#pragma once
// A temporary folder removed at the end of the test.

#include <filesystem>

namespace mirror::test {

class temp_dir {
public:
    temp_dir();
    ~temp_dir();
    temp_dir(temp_dir const&) = delete;
    temp_dir& operator=(temp_dir const&) = delete;
    std::filesystem::path const& path() const { return path_; }
    std::filesystem::path operator/(std::string const& name) const { return path_ / name; }

private:
    std::filesystem::path path_;
};

} // namespace mirror::test
