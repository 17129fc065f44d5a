#include "core/store/forwarding_store.hpp"

namespace mirror::store {

forwarding_store::forwarding_store(std::unique_ptr<store> inner) : owned_(std::move(inner)), inner_(owned_.get()) {}
forwarding_store::forwarding_store(store& inner) : inner_(&inner) {}

store_caps forwarding_store::caps() const { return inner_->caps(); }
std::string forwarding_store::describe() const { return inner_->describe(); }
std::string forwarding_store::server() const { return inner_->server(); }
object_memory* forwarding_store::remembered() { return inner_->remembered(); }

awaitable<result<object_info>> forwarding_store::stat(std::string key) { return inner_->stat(std::move(key)); }

awaitable<result<void>> forwarding_store::read(std::string key, io::byte_sink& out) {
    return inner_->read(std::move(key), out);
}

awaitable<result<void>> forwarding_store::list(std::string prefix, std::function<result<void>(list_entry)> each) {
    return inner_->list(std::move(prefix), std::move(each));
}

awaitable<result<std::unique_ptr<object_writer>>> forwarding_store::open_writer(std::string key, write_mode mode) {
    return inner_->open_writer(std::move(key), mode);
}

awaitable<result<void>> forwarding_store::remove(std::string key) { return inner_->remove(std::move(key)); }

awaitable<result<std::size_t>> forwarding_store::discard_incomplete_writes() {
    return inner_->discard_incomplete_writes();
}

awaitable<result<tagged_object>> forwarding_store::read_tagged(std::string key, std::size_t limit) {
    return inner_->read_tagged(std::move(key), limit);
}

awaitable<result<std::string>> forwarding_store::write_conditional(std::string key, std::string bytes,
                                                                   std::optional<std::string> if_tag) {
    return inner_->write_conditional(std::move(key), std::move(bytes), std::move(if_tag));
}

} // namespace mirror::store
