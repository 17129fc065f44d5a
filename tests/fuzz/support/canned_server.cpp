#include "tests/fuzz/support/canned_server.hpp"

#include "core/io/net.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>

#include <optional>

namespace mirror::fuzz {

using tcp = net::ip::tcp;

namespace {

/// Reads the request head, sends `answer`, closes the sending side, and reads on until the
/// client closes: closing with unread request bytes would reset the connection, and the
/// client could lose the answer before reading it.
awaitable<void> serve(tcp::socket socket, std::optional<std::string> answer) {
    std::string got;
    char buffer[4096];
    while (got.find("\r\n\r\n") == std::string::npos) {
        auto [ec, n] = co_await socket.async_read_some(net::buffer(buffer), use_op);
        if (ec)
            co_return;
        got.append(buffer, n);
    }
    if (answer) {
        auto [ec, n] = co_await net::async_write(socket, net::buffer(*answer), use_op);
        (void)n;
        if (ec)
            co_return;
    }
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    while (true) {
        auto [ec, n] = co_await socket.async_read_some(net::buffer(buffer), use_op);
        (void)n;
        if (ec)
            co_return;
    }
}

} // namespace

canned_server::canned_server() : acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    accept();
    thread_ = std::thread([this] { io_.run(); });
}

canned_server::~canned_server() {
    io_.stop();
    thread_.join();
}

void canned_server::load(std::vector<std::string> answers) {
    std::lock_guard lock(mutex_);
    answers_ = std::move(answers);
    next_ = 0;
}

std::optional<std::string> canned_server::next_answer() {
    std::lock_guard lock(mutex_);
    if (next_ >= answers_.size())
        return std::nullopt;
    return answers_[next_++];
}

void canned_server::accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
        if (ec)
            return; // the acceptor closed: the server is stopping
        net::co_spawn(io_, serve(std::move(socket), next_answer()), net::detached);
        accept();
    });
}

std::vector<std::string> canned_server::split(std::string_view input, std::string_view separator, std::size_t most) {
    std::vector<std::string> out;
    while (out.size() + 1 < most) {
        auto at = input.find(separator);
        if (at == std::string_view::npos)
            break;
        out.emplace_back(input.substr(0, at));
        input.remove_prefix(at + separator.size());
    }
    out.emplace_back(input);
    return out;
}

} // namespace mirror::fuzz
