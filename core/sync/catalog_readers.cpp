#include "core/sync/catalog_readers.hpp"

#include "core/store/blocking_pool.hpp"
#include "core/store/errors.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>

namespace mirror::sync {

catalog_readers::catalog_readers(std::filesystem::path scratch_parent, std::size_t readers)
    : parent_(std::move(scratch_parent)) {
    readers_.resize(std::max<std::size_t>(readers, 1));
    threads_ = std::make_unique<store::blocking_pool>(readers_.size());
}

catalog_readers::~catalog_readers() {
    threads_.reset(); // joined: no read is left
    readers_.clear(); // each database closed before its folder goes
    if (!root_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
}

result<std::filesystem::path> catalog_readers::make_folder() {
    if (root_.empty()) {
        std::error_code ec;
        std::filesystem::path parent = parent_.empty() ? std::filesystem::temp_directory_path(ec) : parent_;
        if (ec)
            return make_error(store::store_errc::not_found, "no temporary folder for catalog copies: " + ec.message());
        std::string pattern = (parent / "fdl-mirror-catalogs-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            return make_error(store::store_errc::access_denied,
                              "cannot make a private folder for catalog copies in " + parent.string());
        root_ = pattern;
        // The readers are made now that their folder is known; each makes its database on
        // its first read.
        for (auto& reader : readers_) {
            reader = std::make_unique<catalog::catalog_reader>(root_);
            free_.push_back(reader.get());
        }
    }
    std::string pattern = (root_ / "pass-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        return make_error(store::store_errc::access_denied,
                          "cannot make a private folder for catalog copies in " + root_.string());
    return std::filesystem::path(pattern);
}

awaitable<result<catalog::catalog_contents>> catalog_readers::read(std::filesystem::path file, std::string key,
                                                                  catalog::read_options options) {
    if (root_.empty())
        co_return make_error(store::store_errc::not_found, key + ": no catalog copies made yet");
    std::optional<result<catalog::catalog_contents>> read;
    std::function<void()> work = [&] {
        catalog::catalog_reader* reader = nullptr;
        {
            // As many threads as readers: one is always free for the thread that runs this.
            std::lock_guard lock(free_mutex_);
            reader = free_.back();
            free_.pop_back();
        }
        struct give_back {
            catalog_readers& owner;
            catalog::catalog_reader* reader;
            ~give_back() {
                std::lock_guard lock(owner.free_mutex_);
                owner.free_.push_back(reader);
            }
        } returned{*this, reader}; // even when the read throws (std::bad_alloc)
        read.emplace(reader->read(file, key, options));
    };
    co_await threads_->run(work);
    co_return std::move(*read);
}

} // namespace mirror::sync
