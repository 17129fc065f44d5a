#pragma once
// A loopback HTTP server for the fuzz targets that drive the real client: the n-th
// connection gets the n-th canned answer, byte for byte, whatever it asked; the server
// then closes its side. It runs on a thread and an io_context of its own, so the target's
// io_context holds only the client's work and its run() returns when the client is done.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace mirror::fuzz {

class canned_server {
public:
    /// Listens on 127.0.0.1, on a port the system picks.
    canned_server();
    /// Stops the thread; connections still open are closed.
    ~canned_server();
    canned_server(canned_server const&) = delete;
    canned_server& operator=(canned_server const&) = delete;

    std::uint16_t port() const { return port_; }

    /// The answers for the connections to come: connection n (counted from this call)
    /// reads a request head and gets answers[n]; connections past the last are closed
    /// after their request head, with no answer.
    void load(std::vector<std::string> answers);

    /// Splits a fuzz input into answers at each `separator` (at most `most` answers; the
    /// last keeps the rest).
    static std::vector<std::string> split(std::string_view input, std::string_view separator, std::size_t most);

private:
    void accept();
    std::optional<std::string> next_answer();

    boost::asio::io_context io_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::mutex mutex_; // guards answers_ and next_, which load() sets from the target's thread
    std::vector<std::string> answers_;
    std::size_t next_ = 0;
    std::thread thread_;
};

} // namespace mirror::fuzz
