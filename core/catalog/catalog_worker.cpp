#include "core/catalog/catalog_worker.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/detail/reader_isolation.hpp"
#include "core/catalog/detail/worker_socket.hpp"
#include "core/catalog/errors.hpp"
#include "core/catalog/sandbox.hpp"
#include "core/catalog/worker_protocol.hpp"
#include "core/io/text.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/sendfile.h>
#include <unistd.h>

namespace mirror::catalog {

namespace {

constexpr int socket_fd = 3;
constexpr int exit_sandbox = 70; // EX_SOFTWARE
constexpr int exit_request = 65; // EX_DATAERR
/// A request names at most a batch of catalogs: a few KiB. Anything near this is garbage.
constexpr std::uint64_t max_request_bytes = 16 * 1024 * 1024;

std::optional<std::uint64_t> number(char const* text) {
    std::string_view s(text);
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return value;
}

/// DuckDB reports its own memory limit as a failed query: here it is a limit reached.
void classify_memory(result<catalog_contents>& outcome) {
    if (!outcome && outcome.error().code == catalog_errc::query_failed &&
        outcome.error().message.find("Out of Memory") != std::string::npos)
        outcome = make_error(catalog_errc::reader_limit, outcome.error().message);
}

/// Where the file behind `fd` lies, for a reader that shares the host's file system:
/// DuckDB opens a catalog by path, and resolves links before it checks the path against
/// the folder it may read.
std::optional<std::string> path_of(int fd, std::string const& folder) {
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    std::string target(4096, '\0');
    ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= target.size())
        return std::nullopt;
    target.resize(static_cast<std::size_t>(n));
    if (!target.starts_with(folder + "/"))
        return std::nullopt;
    return target;
}

/// Copies the catalog behind `fd` into the private root's one folder, where DuckDB can
/// open it by path: over the copy the last request left at the same position, then cut
/// to size. Writing over pages tmpfs already holds costs a fifth of a new file's (0.7 ms
/// against 3.0 ms for a 3.7 MB catalog: docs/benchmarks.md).
result<std::string> copy_in(int fd, std::string const& name, std::size_t index) {
    std::string path = std::string(detail::private_catalogs) + "/" + std::to_string(index) + ".duckdb";
    int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (out < 0)
        return make_error(catalog_errc::cannot_open, name + ": the catalog reader cannot copy it (" +
                                                         std::string(std::strerror(errno)) + ")");
    off_t offset = 0;
    int err = 0;
    for (;;) {
        ssize_t n = ::sendfile(out, fd, &offset, 1 << 30);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        err = n < 0 ? errno : 0;
        break;
    }
    if (err == 0 && ::ftruncate(out, offset) != 0)
        err = errno;
    ::close(out);
    if (err == ENOSPC || err == EFBIG)
        return make_error(catalog_errc::reader_limit, name + ": larger than the catalog reader's scratch space");
    if (err != 0)
        return make_error(catalog_errc::cannot_open, name + ": the catalog reader cannot copy it (" +
                                                         std::string(std::strerror(err)) + ")");
    return path;
}

/// Where DuckDB finds each catalog of a request (its copy in the private root, or its
/// path in the folder the parent named), or why it cannot.
std::vector<result<std::string>> locate(worker_request const& request, std::vector<int> const& fds,
                                        bool private_root) {
    std::vector<result<std::string>> out;
    for (std::size_t i = 0; i < request.items.size(); ++i) {
        auto const& name = request.items[i].name;
        if (private_root) {
            out.push_back(copy_in(fds[i], name, i));
        } else if (auto path = path_of(fds[i], request.folder)) {
            out.emplace_back(std::move(*path));
        } else {
            out.emplace_back(make_error(catalog_errc::cannot_open, name + ": its file lies outside " + request.folder));
        }
    }
    return out;
}

std::vector<result<catalog_contents>> read_items(catalog_reader& reader, worker_request const& request,
                                                 std::vector<result<std::string>> const& where) {
    auto const& items = request.items;
    std::vector<catalog_reader::batch_item> batch;
    for (std::size_t i = 0; i < items.size(); ++i)
        if (where[i])
            batch.push_back({*where[i], items[i].name, items[i].options});
    std::vector<result<catalog_contents>> outcomes;
    try {
        outcomes = reader.read_batch(batch);
    } catch (std::bad_alloc const&) {
        // The address space limit: no catalog of the batch has an answer.
        outcomes.clear();
        for (auto const& item : batch)
            outcomes.emplace_back(make_error(catalog_errc::reader_limit,
                                             item.name + ": the catalog reader ran out of memory"));
    } catch (std::exception const& e) {
        // A bug of the reader that a catalog found: said as such, rather than an abort.
        outcomes.clear();
        for (auto const& item : batch)
            outcomes.emplace_back(
                make_error(catalog_errc::reader_crashed, item.name + ": the catalog reader failed (" +
                                                             std::string(io::utf8_prefix(e.what(), 200)) + ")"));
    }
    for (auto& outcome : outcomes)
        classify_memory(outcome);
    std::vector<result<catalog_contents>> out;
    for (std::size_t i = 0, next = 0; i < items.size(); ++i)
        out.push_back(where[i] ? std::move(outcomes[next++]) : result<catalog_contents>(where[i].error()));
    return out;
}

int serve(int parent, sandbox_limits limits, std::string const& memory_limit) {
    auto sandbox = enter_catalog_sandbox(limits, parent);
    if (!sandbox) // its stderr goes nowhere: the exit status says it
        return exit_sandbox;
    if (detail::send_frame(socket_fd, encode_frame_header(frame_kind::hello, 0), {}, std::nullopt) !=
        detail::socket_outcome::done)
        return 0;
    // The database is made now, while no one waits (a spare reader waits for the next
    // pass). With a private root, DuckDB may open files in its one folder only; without,
    // the first request names the folder of its pass, the only one DuckDB (and Landlock)
    // lets it read, and every later request must name the same one.
    catalog_reader reader;
    reader.prepare(memory_limit);
    if (sandbox->private_root)
        reader.set_folder(detail::private_catalogs);
    std::string folder;
    for (;;) {
        std::string header, payload;
        std::vector<int> fds;
        auto got = detail::receive_exact(socket_fd, worker_frame_header_bytes, header, &fds, std::nullopt);
        if (got != detail::socket_outcome::done)
            return 0; // the parent closed the socket: it needs this reader no more
        auto frame = decode_frame_header(header, frame_kind::request, max_request_bytes, "request");
        if (!frame || detail::receive_exact(socket_fd, frame->length, payload, &fds, std::nullopt) !=
                          detail::socket_outcome::done)
            return exit_request;
        auto request = decode_request(payload);
        if (!request || request->items.size() != fds.size() || request->folder.empty() ||
            (!folder.empty() && request->folder != folder))
            return exit_request;
        if (folder.empty()) {
            folder = request->folder;
            if (!sandbox->private_root) {
                if (!confine_reads_to(folder, *sandbox))
                    return exit_sandbox;
                reader.set_folder(folder);
            }
        }
        auto where = locate(*request, fds, sandbox->private_root);
        detail::close_all(fds);
        auto answer = encode_answer(read_items(reader, *request, where));
        if (detail::send_frame(socket_fd, encode_frame_header(frame_kind::answer, answer.size()) + answer, {},
                               std::nullopt) != detail::socket_outcome::done)
            return 0;
    }
}

} // namespace

std::optional<int> serve_catalog_worker_if_asked(int argc, char** argv) {
    if (argc < 2 || argv[1] != worker_flag)
        return std::nullopt;
    auto parent = argc == 6 ? number(argv[2]) : std::nullopt;
    auto address_space = argc == 6 ? number(argv[3]) : std::nullopt;
    auto cpu = argc == 6 ? number(argv[4]) : std::nullopt;
    if (!parent || !address_space || !cpu) {
        std::fprintf(stderr, "fdl-mirror catalog reader: started without its parent's pid and limits\n");
        return exit_request;
    }
    sandbox_limits limits;
    limits.address_space = *address_space;
    limits.cpu_seconds = *cpu;
    return serve(static_cast<int>(*parent), limits, argv[5]);
}

} // namespace mirror::catalog
