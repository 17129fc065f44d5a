#include "daemon/state/state_file.hpp"

#include "core/io/errors.hpp"
#include "verify/sha256.hpp"
#include "verify/ssh_wire.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <variant>

namespace mirror::daemon {

namespace json = boost::json;
namespace fs = std::filesystem;
using io::store_errc;

// The format this build writes and reads. Another number is ignored whole (a newer
// daemon's file costs an older one extra reads, nothing else).
static constexpr std::int64_t state_format = 1;
// Past http_store_settings::remembered_total_bytes (64 MiB) in base64, with room to spare;
// bounds what a damaged file can make load() allocate.
static constexpr off_t max_state_file_bytes = 256 * 1024 * 1024;
// Encoded names stay under NAME_MAX (255) with ".json", the temporary suffix and the hash.
static constexpr std::size_t max_plain_stem = 150;
static constexpr char const* repositories_folder = "repositories";

static error file_error(int err, std::string const& what) {
    auto code = err == EACCES || err == EPERM ? store_errc::access_denied : store_errc::io_error;
    return make_error(code, what + ": " + std::strerror(err));
}

namespace {
/// Closes a descriptor when it goes out of scope.
struct fd_guard {
    int fd = -1;
    ~fd_guard() {
        if (fd >= 0)
            ::close(fd);
    }
};
} // namespace

std::string state_file_name(std::string_view repo_name) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string stem;
    for (std::size_t i = 0; i < repo_name.size(); ++i) {
        auto c = static_cast<unsigned char>(repo_name[i]);
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                     c == '-' || (c == '.' && i > 0);
        if (plain) {
            stem += static_cast<char>(c);
        } else {
            stem += '%', stem += hex[c >> 4], stem += hex[c & 15];
        }
    }
    if (stem.empty())
        stem = "%"; // no other name encodes to a lone '%'
    if (stem.size() > max_plain_stem) // '~' is encoded in every other name: no collision
        stem = stem.substr(0, 100) + "~" + verify::to_hex(verify::sha256_of(repo_name)).substr(0, 32);
    return stem + ".json";
}

fs::path state_dir::file_of(std::string_view repo_name) const {
    return root_ / repositories_folder / state_file_name(repo_name);
}

/// Writes `text` to `folder/name` through a temporary file and a rename; see save().
static result<void> write_atomically(fs::path const& folder, std::string const& name, std::string_view text) {
    std::string final_path = (folder / name).string();
    fd_guard dir{::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd < 0)
        return file_error(errno, folder.string());
    // Starts with '.', which no state file does, so open() knows it for a leftover.
    std::string temp = (folder / ("." + name + ".XXXXXX")).string();
    fd_guard file{::mkostemp(temp.data(), O_CLOEXEC)};
    if (file.fd < 0)
        return file_error(errno, final_path + ": cannot create a temporary file");
    auto fail = [&](int err, char const* step) {
        ::unlink(temp.c_str());
        return file_error(err, final_path + ": " + step);
    };
    for (std::size_t done = 0; done < text.size();) {
        ssize_t n = ::write(file.fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(errno, "cannot write");
        done += static_cast<std::size_t>(n);
    }
    // The bytes must be on disk before the name points at them, or a crash could leave
    // an empty file under the final name.
    if (::fsync(file.fd) != 0)
        return fail(errno, "cannot write (fsync)");
    int closing = ::close(std::exchange(file.fd, -1));
    if (closing != 0)
        return fail(errno, "cannot write (close)");
    if (::rename(temp.c_str(), final_path.c_str()) != 0)
        return fail(errno, "cannot replace");
    // The rename itself is durable only once the folder is.
    if (::fsync(dir.fd) != 0)
        return file_error(errno, folder.string() + ": fsync");
    return {};
}

result<state_dir> state_dir::open(fs::path root) {
    fs::path folder = root / repositories_folder;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return file_error(ec.value(), folder.string() + ": cannot create the state folder");
    // Before anything is removed: a temporary file may be another daemon's save in progress.
    std::string lock_path = (root / "lock").string(), problem;
    std::string in_use = root.string() + ": another fdl-mirror run uses this state folder (" + lock_path +
                         " is locked); one daemon per state_dir";
    auto taken = mirror_lock::take_file(lock_path, in_use, problem);
    if (!taken)
        return make_error(problem == in_use ? store_errc::transient : store_errc::io_error, problem);
    auto lock = std::make_shared<mirror_lock const>(std::move(*taken));
    for (auto const& entry : fs::directory_iterator(folder, ec)) {
        auto file = entry.path().filename().string();
        if (file.starts_with(".") && file.find(".json.") != std::string::npos)
            fs::remove(entry.path(), ec); // a save a crash interrupted; the old file is whole
    }
    // Creating a file is what save() does first; access(2) would not see every reason it
    // fails. The name is a temporary one's, so that a crash right here leaves a leftover
    // the next open() removes.
    std::string trial = (folder / ".write-test.json.XXXXXX").string();
    fd_guard file{::mkostemp(trial.data(), O_CLOEXEC)};
    if (file.fd < 0)
        return file_error(errno, folder.string() + ": state folder is not writable");
    ::unlink(trial.c_str());
    return state_dir(std::move(root), std::move(lock));
}

void state_dir::forget(std::string const& repo_name) const {
    std::error_code ignored;
    fs::remove(file_of(repo_name), ignored);
}

result<void> state_dir::save(std::string const& repo_name, repository_state const& state) const {
    json::object o;
    o["format"] = state_format;
    o["repository"] = repo_name; // lets load() refuse a file that is another repository's
    if (state.last_success && std::isfinite(*state.last_success))
        o["last_success"] = *state.last_success;
    if (state.last_attempt && std::isfinite(*state.last_attempt))
        o["last_attempt"] = *state.last_attempt;
    o["consecutive_failures"] = state.consecutive_failures;
    if (state.failing_since && std::isfinite(*state.failing_since))
        o["failing_since"] = *state.failing_since;
    if (state.configured_since && std::isfinite(*state.configured_since))
        o["configured_since"] = *state.configured_since;
    if (state.paused) {
        // Never a throwing parse here: one odd field must not stop the file being written.
        boost::system::error_code ec;
        json::parse_options options;
        options.allow_invalid_utf8 = true;
        if (auto paused = json::parse(coord::render_pause(*state.paused), ec, {}, options); !ec)
            o["paused"] = std::move(paused);
    }
    o["origin"] = state.origin;
    json::array cache;
    for (auto const& object : state.origin_cache)
        cache.push_back(json::object{{"key", object.key},
                                     {"validator_header", object.validator_header},
                                     {"validator", object.validator},
                                     {"sha256", verify::to_hex(verify::sha256_of(object.bytes))},
                                     {"bytes", verify::base64_encode(object.bytes)}});
    o["origin_cache"] = std::move(cache);
    o["status"] = to_json(state.record);
    return write_atomically(root_ / repositories_folder, state_file_name(repo_name), json::serialize(o) + "\n");
}

/// The file's text; nullopt when there is none.
static result<std::optional<std::string>> read_state_file(fs::path const& path) {
    fd_guard file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
    if (file.fd < 0 && errno == ENOENT)
        return std::optional<std::string>();
    if (file.fd < 0)
        return file_error(errno, path.string());
    struct stat about {};
    if (::fstat(file.fd, &about) != 0)
        return file_error(errno, path.string());
    if (!S_ISREG(about.st_mode) || about.st_size > max_state_file_bytes)
        return make_error(store_errc::io_error, path.string() + ": not a regular file of at most 256 MiB");
    std::string text(static_cast<std::size_t>(about.st_size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::read(file.fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return file_error(errno, path.string());
        if (n == 0)
            break; // shrunk meanwhile: the parse will say what is wrong
        done += static_cast<std::size_t>(n);
    }
    text.resize(done);
    return std::optional(std::move(text));
}

/// A string member, or nullopt when missing or not a string.
static std::optional<std::string> string_of(json::object const& o, std::string_view name) {
    auto const* v = o.if_contains(name);
    if (v == nullptr || !v->is_string())
        return std::nullopt;
    return std::string(v->get_string());
}

/// Parses a file's text; the reason as a string on failure (load() only warns).
static std::variant<repository_state, std::string> parse_state(std::string_view text, std::string_view repo_name) {
    json::parse_options options;
    options.allow_invalid_utf8 = true; // keys and validators are bytes; save() wrote them so
    boost::system::error_code ec;
    json::value value = json::parse(text, ec, {}, options);
    if (ec || !value.is_object())
        return std::string("not a JSON object");
    auto const& o = value.get_object();
    auto const* format = o.if_contains("format");
    if (format == nullptr || !format->is_int64() || format->get_int64() != state_format)
        return std::string("not format ") + std::to_string(state_format);
    if (string_of(o, "repository") != repo_name)
        return "not the state of repository '" + std::string(repo_name) + "'";
    repository_state state;
    std::pair<char const*, std::optional<double>*> const times[] = {{"last_success", &state.last_success},
                                                                    {"last_attempt", &state.last_attempt},
                                                                    {"failing_since", &state.failing_since},
                                                                    {"configured_since", &state.configured_since}};
    for (auto [name, into] : times) {
        if (auto const* v = o.if_contains(name)) {
            if (!v->is_number())
                return std::string(name) + ": not a number";
            *into = v->to_number<double>(ec);
        }
    }
    auto const* failures = o.if_contains("consecutive_failures");
    if (failures == nullptr || !failures->is_int64() || failures->get_int64() < 0 ||
        failures->get_int64() > UINT_MAX)
        return std::string("consecutive_failures: not a count");
    state.consecutive_failures = static_cast<unsigned>(failures->get_int64());
    if (auto const* paused = o.if_contains("paused"); paused != nullptr && paused->is_object())
        state.paused = coord::parse_pause(json::serialize(*paused));
    state.origin = string_of(o, "origin").value_or("");
    auto const* cache = o.if_contains("origin_cache");
    if (cache == nullptr || !cache->is_array())
        return std::string("origin_cache: not a list");
    for (std::size_t i = 0; i < cache->get_array().size(); ++i) {
        auto const* entry = cache->get_array()[i].if_object();
        auto where = "origin_cache[" + std::to_string(i) + "]";
        if (entry == nullptr)
            return where + ": not an object";
        auto key = string_of(*entry, "key");
        auto header = string_of(*entry, "validator_header");
        auto validator = string_of(*entry, "validator");
        auto sha256 = string_of(*entry, "sha256");
        auto base64 = string_of(*entry, "bytes");
        if (!key || !header || !validator || !sha256 || !base64)
            return where + ": needs key, validator_header, validator, sha256 and bytes as strings";
        auto bytes = verify::base64_decode(*base64);
        if (!bytes)
            return where + " (" + *key + "): bytes: not base64";
        // JSON and base64 survive most damage; the digest catches what they let through.
        if (verify::parse_sha256_hex(*sha256) != verify::sha256_of(*bytes))
            return where + " (" + *key + "): bytes do not match their sha256";
        state.origin_cache.push_back(
            {std::move(*key), std::move(*header), std::move(*validator), std::move(*bytes)});
    }
    if (auto const* status = o.if_contains("status")) { // absent from files of older daemons
        std::string why;
        auto record = pass_record_of(*status, why);
        if (!record)
            return "status: " + why;
        state.record = std::move(*record);
    }
    return state;
}

repository_state state_dir::load(std::string const& repo_name, std::string* warning) const {
    return peek(root_, repo_name, warning);
}

repository_state state_dir::peek(fs::path const& root, std::string const& repo_name, std::string* warning) {
    fs::path path = root / repositories_folder / state_file_name(repo_name);
    auto warn = [&](std::string const& why) {
        if (warning != nullptr)
            *warning = why + " (ignored: the next pass reads the origin in full)";
        return repository_state{};
    };
    auto text = read_state_file(path);
    if (!text)
        return warn(text.error().message);
    if (!*text)
        return {};
    auto parsed = parse_state(**text, repo_name);
    if (auto const* why = std::get_if<std::string>(&parsed))
        return warn(path.string() + ": " + *why);
    return std::get<repository_state>(std::move(parsed));
}

} // namespace mirror::daemon
