#include "core/coord/probe.hpp"

#include "core/io/errors.hpp"

namespace mirror::coord {

namespace {
/// A tag of the same form that is not `tag` (a server might compare only so many bytes).
std::string wrong_tag(std::string tag) {
    if (tag.empty())
        return "0";
    tag[0] = tag[0] == '0' ? '1' : '0';
    return tag;
}
} // namespace

awaitable<result<bool>> honours_conditional_writes(store::store& mirror, std::string key) {
    if (!mirror.caps().conditional_writes)
        co_return false;
    if (auto gone = co_await mirror.remove(key); !gone && gone.error().code != io::store_errc::not_found)
        co_return gone.error();
    auto first = co_await mirror.write_conditional(key, "probe 1\n", std::nullopt);
    if (!first)
        co_return first.error();
    bool honoured = true;
    auto lost = [&](result<std::string> const& write) -> result<bool> {
        if (write)
            return false; // stored when it should have lost
        if (write.error().code == io::store_errc::conflict)
            return true;
        return write.error();
    };
    for (auto const& if_tag : {std::optional<std::string>(), std::optional<std::string>(wrong_tag(*first))}) {
        auto write = lost(co_await mirror.write_conditional(key, "probe 2\n", if_tag));
        if (!write)
            co_return write.error();
        honoured = honoured && *write;
    }
    if (honoured) { // the right tag wins: the form of the tag sent is one the server matches
        auto second = co_await mirror.write_conditional(key, "probe 3\n", *first);
        if (!second && second.error().code != io::store_errc::conflict)
            co_return second.error();
        honoured = second.has_value();
    }
    if (auto gone = co_await mirror.remove(key); !gone && gone.error().code != io::store_errc::not_found)
        co_return gone.error();
    co_return honoured;
}

} // namespace mirror::coord
