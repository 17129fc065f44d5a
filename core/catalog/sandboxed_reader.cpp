#include "core/catalog/sandboxed_reader.hpp"

#include "core/catalog/catalog_worker.hpp"
#include "core/catalog/detail/worker_socket.hpp"
#include "core/catalog/errors.hpp"
#include "core/catalog/worker_protocol.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace mirror::catalog {

namespace {

std::atomic<std::uint64_t> crashed_total{0};
std::atomic<std::uint64_t> limited_total{0};
std::atomic<std::uint64_t> started_total{0};

/// What the program, its libraries, its threads' stacks and malloc's arenas map besides
/// DuckDB's buffers (fdl-mirror's reader peaks at about 100 MiB of it; docs/design.md).
constexpr std::uint64_t reader_overhead = std::uint64_t{1} << 30;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

/// The reader's status when it cannot enter its sandbox (catalog_worker.cpp, EX_SOFTWARE).
constexpr int exit_no_sandbox = 70;

/// The environment a reader gets: nothing of this process's but a sanitizer's options.
std::vector<std::string> reader_environment() {
    std::vector<std::string> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view entry(*e);
        for (std::string_view keep : {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS="})
            if (entry.starts_with(keep))
                out.emplace_back(entry);
    }
    return out;
}

/// Whether `file` lies in `folder` (normalised, without links): the real path of the
/// folder the reader serves, which a pass's private copies are written in.
bool lies_in(std::filesystem::path const& file, std::string const& folder) {
    std::error_code ec;
    auto real = std::filesystem::weakly_canonical(file.parent_path(), ec);
    std::string parent = (ec ? file.parent_path() : real).lexically_normal().string();
    return parent == folder || parent.starts_with(folder + "/");
}

/// `extra` entries replace inherited ones of the same name.
void add_environment(std::vector<std::string>& environment, std::vector<std::string> const& extra) {
    for (auto const& entry : extra) {
        auto name = entry.substr(0, entry.find('=') + 1);
        std::erase_if(environment, [&](std::string const& e) { return e.starts_with(name); });
        environment.push_back(entry);
    }
}

std::string signal_name(int sig) {
    char const* abbrev = ::sigabbrev_np(sig);
    return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

std::chrono::milliseconds longest_limit(std::vector<catalog_reader::batch_item> const& items) {
    std::chrono::milliseconds longest{0};
    for (auto const& item : items)
        longest = std::max(longest, item.options.time_limit);
    return longest;
}

} // namespace

std::uint64_t reader_address_space(std::string const& memory_limit) {
    if (sanitized)
        return 0;
    double value = 0;
    auto [end, ec] = std::from_chars(memory_limit.data(), memory_limit.data() + memory_limit.size(), value);
    if (ec != std::errc() || value <= 0)
        return 0;
    std::string unit(end, memory_limit.data() + memory_limit.size());
    std::erase(unit, ' ');
    for (char& c : unit)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    static constexpr std::pair<char const*, double> units[] = {
        {"", 1},         {"B", 1},          {"KB", 1e3},        {"MB", 1e6},       {"GB", 1e9},
        {"TB", 1e12},    {"KIB", 1024.0},   {"MIB", 1048576.0}, {"GIB", 1073741824.0}};
    for (auto const& [name, factor] : units)
        if (unit == name)
            return static_cast<std::uint64_t>(value * factor) + reader_overhead;
    return 0;
}

sandboxed_reader::sandboxed_reader(reader_process_settings settings) : settings_(std::move(settings)) {}

sandboxed_reader::~sandboxed_reader() {
    stop();
    end(spare_);
}

sandboxed_reader::failure_counts sandboxed_reader::process_failures() {
    return {crashed_total.load(std::memory_order_relaxed), limited_total.load(std::memory_order_relaxed),
            started_total.load(std::memory_order_relaxed)};
}

int sandboxed_reader::stop() {
    int status = end(running_);
    folder_.clear();
    served_ = 0;
    return status;
}

int sandboxed_reader::end(reader_process& process) {
    int status = 0;
    if (process.socket >= 0)
        ::close(process.socket);
    process.socket = -1;
    if (process.pid > 0) {
        ::kill(process.pid, SIGKILL); // harmless on one that already exited: it stays a zombie until reaped
        while (::waitpid(process.pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    process.pid = -1;
    return status;
}

result<sandboxed_reader::reader_process> sandboxed_reader::spawn(std::string const& memory_limit,
                                                                  std::chrono::milliseconds time_limit) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return make_error(catalog_errc::reader_crashed,
                          "catalog reader: cannot make its socket (" + std::string(std::strerror(errno)) + ")");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // Descriptor 3 is the socket; nothing else of this process's (connections, files in
    // transfer, the lock, its log) reaches the reader: what a subverted reader writes to
    // its standard output or error goes nowhere, and cannot pass for our log's lines.
    posix_spawn_file_actions_adddup2(&actions, pair[1], 3);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    // Its CPU over its whole life, a backstop behind each catalog's deadline: its catalogs'
    // time limits, and a second more each.
    auto per_catalog = std::chrono::duration_cast<std::chrono::seconds>(time_limit).count() + 1;
    std::string cpu = std::to_string(settings_.max_catalogs * static_cast<std::uint64_t>(per_catalog) + 10);
    std::string parent = std::to_string(::getpid());
    std::string space = std::to_string(reader_address_space(memory_limit));
    std::string program = settings_.program.string();
    std::string flag(worker_flag);
    std::string name = "fdl-mirror-catalog-reader";
    std::string memory = memory_limit;
    std::vector<char*> argv = {name.data(), flag.data(), parent.data(), space.data(), cpu.data(), memory.data(), nullptr};
    auto environment = reader_environment();
    add_environment(environment, settings_.environment);
    std::vector<char*> envp;
    for (auto& e : environment)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t child = -1;
    int rc = ::posix_spawn(&child, program.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(pair[1]);
    if (rc != 0) {
        ::close(pair[0]);
        return make_error(catalog_errc::reader_crashed,
                          "catalog reader: cannot start " + program + " (" + std::strerror(rc) + ")");
    }
    started_total.fetch_add(1, std::memory_order_relaxed);
    return reader_process{child, pair[0], memory_limit, time_limit};
}

result<void> sandboxed_reader::start(std::string const& memory_limit, std::chrono::milliseconds time_limit) {
    // A spare started for the next pass has had its program loaded and its sandbox entered
    // meanwhile (a reader takes its folder from its first request): most of a start's cost.
    if (spare_.pid > 0 && (spare_.memory_limit != memory_limit || spare_.time_limit < time_limit))
        end(spare_);
    if (spare_.pid > 0) {
        running_ = std::exchange(spare_, reader_process{});
    } else {
        auto spawned = spawn(memory_limit, time_limit);
        if (!spawned)
            return spawned.error();
        running_ = std::move(*spawned);
    }
    ++starts_;
    // The hello says the reader is sandboxed: a program that does not serve readers, or a
    // sandbox that cannot be entered, never gets a catalog.
    std::string header;
    auto until = std::chrono::steady_clock::now() + settings_.startup_limit;
    auto got = detail::receive_exact(running_.socket, worker_frame_header_bytes, header, nullptr, until);
    if (got != detail::socket_outcome::done)
        return failure("catalog reader", got == detail::socket_outcome::timed_out, "while starting");
    if (auto hello = decode_frame_header(header, frame_kind::hello, 0, "catalog reader"); !hello) {
        stop();
        return hello.error();
    }
    return {};
}

error sandboxed_reader::failure(std::string const& who, bool timed_out, std::string const& detail) {
    int status = stop();
    std::string when = detail.empty() ? "" : " " + detail;
    if (timed_out)
        return make_error(catalog_errc::reader_limit, who + ": the catalog reader took too long" + when +
                                                          ", and was stopped");
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGXCPU)
            return make_error(catalog_errc::reader_limit, who + ": the catalog reader reached its CPU limit" + when);
        if (sig == SIGSYS) // the filter's default action: a call it does not allow
            return make_error(catalog_errc::reader_crashed, who + ": the catalog reader made a system call its "
                                                                  "sandbox does not allow" + when + " (SIGSYS)");
        return make_error(catalog_errc::reader_crashed,
                          who + ": the catalog reader crashed" + when + " (" + signal_name(sig) + ")");
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == exit_no_sandbox)
        return make_error(catalog_errc::reader_crashed,
                          who + ": the catalog reader could not enter its sandbox" + when +
                              " (status 70; `fdl-mirror --version` says what this machine allows)");
    return make_error(catalog_errc::reader_crashed, who + ": the catalog reader exited" + when + " with status " +
                                                        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

result<std::vector<result<catalog_contents>>>
sandboxed_reader::exchange(std::vector<catalog_reader::batch_item> const& items, std::string const& folder) {
    std::string who = items.size() == 1 ? items.front().name : std::to_string(items.size()) + " catalogs";
    std::vector<int> fds;
    struct closer {
        std::vector<int>& fds;
        ~closer() { detail::close_all(fds); }
    } closed{fds};
    worker_request request{folder, {}};
    for (auto const& item : items) {
        // The reader reads what it is given: only files of the folder it serves are.
        if (!lies_in(item.file, folder))
            return make_error(catalog_errc::cannot_open, item.name + ": its file lies outside " + folder);
        // Never through a link: the copy is this process's own, in its private folder.
        int fd = ::open(item.file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return make_error(catalog_errc::cannot_open,
                              item.name + ": cannot open its private copy (" + std::strerror(errno) + ")");
        fds.push_back(fd);
        request.items.push_back({item.name, item.options});
    }
    auto deadline = std::chrono::steady_clock::now() + settings_.grace;
    for (auto const& item : items)
        deadline += item.options.time_limit;
    std::string payload = encode_request(request);
    auto sent = detail::send_frame(running_.socket, encode_frame_header(frame_kind::request, payload.size()) + payload, fds,
                                   deadline);
    detail::close_all(fds); // the reader has its own copies now
    if (sent != detail::socket_outcome::done)
        return failure(who, sent == detail::socket_outcome::timed_out);
    std::string header, answer;
    auto got = detail::receive_exact(running_.socket, worker_frame_header_bytes, header, nullptr, deadline);
    if (got != detail::socket_outcome::done)
        return failure(who, got == detail::socket_outcome::timed_out);
    // An answer is smaller than the contents it decodes into, so one within what each
    // catalog may take (and room for errors) is all an honest reader sends.
    std::uint64_t max_answer = 0;
    for (auto const& item : items)
        max_answer += item.options.max_memory == 0 ? settings_.max_answer_bytes : item.options.max_memory + (64 << 10);
    auto frame = decode_frame_header(header, frame_kind::answer, std::min(max_answer, settings_.max_answer_bytes), who);
    if (!frame) {
        stop();
        return frame.error();
    }
    got = detail::receive_exact(running_.socket, frame->length, answer, nullptr, deadline);
    if (got != detail::socket_outcome::done)
        return failure(who, got == detail::socket_outcome::timed_out);
    std::vector<read_options> asked;
    for (auto const& item : items)
        asked.push_back(item.options);
    auto decoded = decode_answer(answer, asked, who);
    if (!decoded)
        stop(); // a reader that answers garbage is not asked again
    return decoded;
}

std::vector<result<catalog_contents>> sandboxed_reader::read_batch(std::vector<catalog_reader::batch_item> const& items,
                                                                   std::filesystem::path const& folder) {
    // DuckDB compares the real path of each file with the folder it may read.
    std::error_code ec;
    auto real = std::filesystem::weakly_canonical(folder, ec);
    std::string tenant = (ec ? folder : real).lexically_normal().string();
    while (tenant.size() > 1 && tenant.ends_with('/'))
        tenant.pop_back();
    std::vector<result<catalog_contents>> out;
    if (items.empty())
        return out;
    std::string const& memory_limit = items.front().options.memory_limit;
    bool alike = std::all_of(items.begin(), items.end(),
                             [&](auto const& item) { return item.options.memory_limit == memory_limit; });
    auto read_alone = [&] {
        for (auto const& item : items)
            out.push_back(std::move(read_batch({item}, folder).front()));
        return std::move(out);
    };
    if (!alike)
        return read_alone();
    // A reader's limits are set when it starts: other limits need another reader.
    bool other_limits = running_.memory_limit != memory_limit || running_.time_limit < longest_limit(items);
    if (running_.pid > 0 && (folder_ != tenant || other_limits || served_ >= settings_.max_catalogs))
        stop();
    if (running_.pid < 0) {
        if (auto started = start(memory_limit, longest_limit(items)); !started) {
            auto const& e = started.error();
            (e.code == catalog_errc::reader_limit ? limited_total : crashed_total).fetch_add(1);
            for (auto const& item : items)
                out.push_back(error{e.code, item.name + ": " + e.message});
            return out;
        }
        folder_ = tenant;
    }
    served_ += items.size();
    auto answered = exchange(items, tenant);
    // Passes come one after another: from the second reader on, the next one is started
    // now, after the read (while it starts, it would take a core from this one's).
    if (starts_ > 1 && spare_.pid < 0)
        if (auto spare = spawn(memory_limit, longest_limit(items)))
            spare_ = std::move(*spare);
    if (answered)
        return std::move(*answered);
    if (items.size() > 1)
        return read_alone(); // which of them did it?
    auto const& e = answered.error();
    if (e.code == catalog_errc::reader_crashed)
        crashed_total.fetch_add(1, std::memory_order_relaxed);
    else if (e.code == catalog_errc::reader_limit)
        limited_total.fetch_add(1, std::memory_order_relaxed);
    out.push_back(e);
    return out;
}

} // namespace mirror::catalog
