#include "daemon/service/notify.hpp"

#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

using namespace mirror;

namespace {

/// A datagram socket bound where a service manager would listen.
struct fake_manager {
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    explicit fake_manager(std::string const& path) {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, path.data(), path.size());
        if (path.front() == '@')
            address.sun_path[0] = '\0';
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address),
                       static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size())) == 0);
    }
    ~fake_manager() { ::close(fd); }
    std::string receive() {
        char buffer[4096];
        auto n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        return n < 0 ? std::string("<nothing>") : std::string(buffer, static_cast<std::size_t>(n));
    }
};

} // namespace

TEST_CASE("notifications reach a socket at a path and an abstract one, one datagram each") {
    test::temp_dir tmp;
    std::string path = (tmp / "notify").string();
    fake_manager at_path(path);
    daemon::notifier to_path(path);
    CHECK(to_path.enabled());
    CHECK(to_path.send("READY=1"));
    CHECK(to_path.send("STATUS=mirroring 2 repositories\nWATCHDOG=1"));
    CHECK(at_path.receive() == "READY=1");
    CHECK(at_path.receive() == "STATUS=mirroring 2 repositories\nWATCHDOG=1");

    std::string abstract = "@fdl-mirror-test-" + std::to_string(::getpid());
    fake_manager at_name(abstract);
    CHECK(daemon::notifier(abstract).send("STOPPING=1"));
    CHECK(at_name.receive() == "STOPPING=1");
}

TEST_CASE("without a socket nothing is sent, and a socket that is gone is a reported failure") {
    daemon::notifier none(std::nullopt);
    CHECK(!none.enabled());
    CHECK(none.send("READY=1"));
    std::string problem;
    CHECK(!daemon::notifier(std::string("/nonexistent/notify")).send("READY=1", &problem));
    CHECK(problem.find("/nonexistent/notify") != std::string::npos);
    CHECK(!daemon::notifier(std::string("relative")).send("READY=1", &problem));
    CHECK(daemon::notifier::reloading_message().starts_with("RELOADING=1\nMONOTONIC_USEC="));
}
