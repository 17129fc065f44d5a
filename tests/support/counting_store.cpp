#include "tests/support/counting_store.hpp"

namespace mirror::test {

awaitable<result<mirror::store::object_info>> counting_store::stat(std::string key) {
    stats.push_back(key);
    return inner().stat(std::move(key));
}

awaitable<result<void>> counting_store::read(std::string key, mirror::io::byte_sink& out) {
    reads.push_back(key);
    return inner().read(std::move(key), out);
}

awaitable<result<void>> counting_store::list(std::string prefix, std::function<result<void>(mirror::store::list_entry)> each) {
    lists.push_back(prefix);
    return inner().list(std::move(prefix), std::move(each));
}

awaitable<result<std::unique_ptr<mirror::store::object_writer>>> counting_store::open_writer(std::string key,
                                                                                     mirror::store::write_mode mode) {
    writes.push_back(key);
    return inner().open_writer(std::move(key), mode);
}

awaitable<result<void>> counting_store::remove(std::string key) {
    writes.push_back("remove " + key);
    return inner().remove(std::move(key));
}

awaitable<result<mirror::store::tagged_object>> counting_store::read_tagged(std::string key, std::size_t limit) {
    conditional.push_back("read " + key);
    return inner().read_tagged(std::move(key), limit);
}

awaitable<result<std::string>> counting_store::write_conditional(std::string key, std::string bytes,
                                                                 std::optional<std::string> if_tag) {
    conditional.push_back("write " + key);
    return inner().write_conditional(std::move(key), std::move(bytes), std::move(if_tag));
}

} // namespace mirror::test
