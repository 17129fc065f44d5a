#include "core/http/pool_receive.hpp"
#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <sys/socket.h>
#include <unistd.h>

using namespace mirror::http;
using namespace std::chrono_literals;

namespace {

/// A connected pair of stream sockets, closed at the end.
struct socket_pair {
    int ends[2] = {-1, -1};
    socket_pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0); }
    ~socket_pair() {
        for (int end : ends)
            if (end >= 0)
                ::close(end);
    }
    int reader() const { return ends[0]; }
    void send(std::string const& bytes) const {
        REQUIRE(::write(ends[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    }
    void close_writer() {
        ::close(ends[1]);
        ends[1] = -1;
    }
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

TEST_CASE("receive_available takes what is there, and returns once nothing more comes for the quiet time") {
    socket_pair pair;
    pair.send("0123456789");
    std::string into(100, '\0');
    auto started = std::chrono::steady_clock::now();
    auto got = receive_available(pair.reader(), into, 30ms, 1000ms);
    CHECK(got.bytes == 10);
    CHECK(into.substr(0, 10) == "0123456789");
    CHECK_FALSE(got.closed);
    CHECK(got.error == 0);
    CHECK(milliseconds_since(started) >= 25.0); // it waited the quiet time for more
    CHECK(milliseconds_since(started) < 900.0); // and not up to the longest
}

TEST_CASE("receive_available stops when its span is full, leaving the rest in the socket") {
    socket_pair pair;
    pair.send("0123456789");
    std::string into(4, '\0');
    auto got = receive_available(pair.reader(), into, 1000ms, 1000ms);
    CHECK(got.bytes == 4);
    CHECK(into == "0123");
    CHECK(bytes_waiting(pair.reader()));
}

TEST_CASE("receive_available reports the peer's close after the bytes before it") {
    socket_pair pair;
    pair.send("abc");
    pair.close_writer();
    std::string into(100, '\0');
    auto got = receive_available(pair.reader(), into, 1000ms, 1000ms);
    CHECK(got.bytes == 3);
    CHECK(got.closed);
    CHECK(got.error == 0);
}

TEST_CASE("receive_available never holds its thread past the longest time, even while bytes drip in") {
    socket_pair pair;
    std::atomic<bool> stop{false};
    std::thread dripper([&] {
        for (int i = 0; i < 400 && !stop; ++i) { // a byte every 5 ms, for up to 2 s
            REQUIRE(::write(pair.ends[1], "d", 1) == 1);
            std::this_thread::sleep_for(5ms);
        }
    });
    std::string into(1000, '\0');
    auto started = std::chrono::steady_clock::now();
    auto got = receive_available(pair.reader(), into, 1000ms, 100ms);
    double took = milliseconds_since(started);
    stop = true;
    dripper.join();
    CHECK(got.bytes > 0);
    CHECK(got.bytes < 1000);
    CHECK(took >= 95.0);
    CHECK(took < 1000.0); // the longest time ends it, not the quiet time nor the drip
}

TEST_CASE("receive_available reports a read that fails with its errno") {
    int pipe_ends[2];
    REQUIRE(::pipe(pipe_ends) == 0);
    REQUIRE(::write(pipe_ends[1], "x", 1) == 1);
    std::string into(10, '\0');
    auto got = receive_available(pipe_ends[0], into, 10ms, 10ms); // recv on a pipe: not a socket
    CHECK(got.bytes == 0);
    CHECK(got.error == ENOTSOCK);
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
}

TEST_CASE("bytes_waiting reads nothing, and says false on an empty socket") {
    socket_pair pair;
    CHECK_FALSE(bytes_waiting(pair.reader()));
    pair.send("z");
    CHECK(bytes_waiting(pair.reader()));
    CHECK(bytes_waiting(pair.reader())); // still there
    std::string into(1, '\0');
    CHECK(receive_available(pair.reader(), into, 10ms, 10ms).bytes == 1);
    CHECK(into == "z");
}
