#pragma once
// The async vocabulary of core: C++20 coroutines on one io_context thread.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace mirror {

namespace net = boost::asio;

template <class T>
using awaitable = net::awaitable<T>;

/// Completion token that returns errors as values: `auto [ec, n] = co_await op(use_op);`
inline constexpr auto use_op = net::as_tuple(net::use_awaitable);

} // namespace mirror
