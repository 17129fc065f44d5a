#include "core/catalog/worker_protocol.hpp"

#include "core/catalog/errors.hpp"
#include "core/fdl/paths.hpp"
#include "core/io/text.hpp"

#include <algorithm>

namespace mirror::catalog {

namespace {

constexpr std::uint32_t frame_magic = 0x4644'4c57; // "FDLW"
/// Longer messages and names are cut by the reader itself; anything longer is garbage.
constexpr std::size_t max_text = 64 * 1024;
/// A DuckLake view's SQL is reported whole (verify lists views), within reason.
constexpr std::size_t max_sql = 4 * 1024 * 1024;

class writer {
public:
    void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
    void u32(std::uint32_t v) { put(v, 4); }
    void u64(std::uint64_t v) { put(v, 8); }
    void text(std::string_view s) {
        u64(s.size());
        out_.append(s);
    }
    void optional_u64(std::optional<std::uint64_t> v) {
        u8(v ? 1 : 0);
        if (v)
            u64(*v);
    }
    std::string take() { return std::move(out_); }

private:
    void put(std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
    std::string out_;
};

/// Reads what a writer wrote, refusing whatever does not fit: the first failure sticks,
/// and every later read returns zero values, so callers check ok() once per record.
class reader {
public:
    explicit reader(std::string_view in) : in_(in) {}
    bool ok() const { return ok_; }
    bool at_end() const { return at_ == in_.size(); }
    std::string const& why() const { return why_; }
    void fail(std::string why) {
        if (ok_)
            why_ = std::move(why);
        ok_ = false;
    }

    std::uint8_t u8() { return static_cast<std::uint8_t>(get(1, "a byte")); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(get(4, "an integer")); }
    std::uint64_t u64() { return get(8, "an integer"); }
    bool flag() {
        auto v = u8();
        if (v > 1)
            fail("a flag of " + std::to_string(v));
        return v == 1;
    }
    std::optional<std::uint64_t> optional_u64() {
        if (!flag())
            return std::nullopt;
        return u64();
    }
    std::string text(std::size_t limit = max_text) {
        auto size = u64();
        if (!ok_ || size > limit || size > in_.size() - at_) {
            fail("a text of " + std::to_string(size) + " bytes");
            return {};
        }
        std::string out(in_.substr(at_, size));
        at_ += size;
        return out;
    }
    /// A count of items of at least `min_bytes` each: more than what is left could hold
    /// is garbage (and would have the caller reserve memory for nothing).
    std::size_t count(std::size_t min_bytes, std::uint64_t limit) {
        auto n = u64();
        if (ok_ && (n > limit || n > (in_.size() - at_) / min_bytes))
            fail("a count of " + std::to_string(n));
        return ok_ ? static_cast<std::size_t>(n) : 0;
    }

private:
    std::uint64_t get(int bytes, char const* what) {
        if (!ok_ || in_.size() - at_ < static_cast<std::size_t>(bytes)) {
            fail(std::string("cut short before ") + what);
            return 0;
        }
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v |= std::uint64_t(static_cast<unsigned char>(in_[at_ + i])) << (8 * i);
        at_ += bytes;
        return v;
    }
    std::string_view in_;
    std::size_t at_ = 0;
    bool ok_ = true;
    std::string why_;
};

error garbage(std::string const& who, std::string const& why) {
    return make_error(catalog_errc::reader_crashed, who + ": the catalog reader answered garbage: " + why);
}

bool known_catalog_code(std::uint32_t code) {
    return code >= static_cast<std::uint32_t>(catalog_errc::cannot_open) &&
           code <= static_cast<std::uint32_t>(catalog_errc::reader_limit);
}

void put_error(writer& w, error const& e) {
    // Only the reader's own codes cross: anything else is reported as a failed query.
    bool ours = e.code.category() == catalog_category();
    w.u32(ours ? static_cast<std::uint32_t>(e.code.value()) : static_cast<std::uint32_t>(catalog_errc::query_failed));
    w.text(io::utf8_prefix(e.message, max_text));
}

std::optional<error> get_error(reader& r) {
    auto code = r.u32();
    // The reader is not trusted: its words reach logs and JSON, so they are made valid
    // UTF-8 here (paths are checked as paths where they are used).
    auto message = io::valid_utf8(r.text());
    if (!r.ok())
        return std::nullopt;
    if (!known_catalog_code(code)) {
        r.fail("an error code of " + std::to_string(code));
        return std::nullopt;
    }
    return make_error(static_cast<catalog_errc>(code), std::move(message));
}

void put_contents(writer& w, catalog_contents const& c) {
    w.text(c.format);
    w.text(c.data_path);
    w.u64(c.last_snapshot);
    w.u64(c.retained_snapshots.size());
    for (auto s : c.retained_snapshots)
        w.u64(s);
    w.u64(c.tables.size());
    for (auto const& t : c.tables) {
        w.text(t.name);
        w.u8(t.renamed_columns ? 1 : 0);
        w.u64(t.files.size());
        for (auto const& f : t.files) {
            w.text(f.path);
            w.u64(f.rows);
            w.u64(f.bytes);
            w.optional_u64(f.footer_bytes);
            w.u8(f.deletes ? 1 : 0);
            if (f.deletes) {
                w.text(f.deletes->path);
                w.u64(f.deletes->rows);
                w.u64(f.deletes->bytes);
            }
        }
    }
    w.u64(c.views.size());
    for (auto const& v : c.views) {
        w.text(v.name);
        w.text(v.dialect);
        w.text(io::utf8_prefix(v.sql, max_sql));
    }
    w.u64(c.needed.size());
    for (auto const& n : c.needed) {
        w.text(n.path);
        w.u64(n.bytes);
    }
    w.u64(c.problems.size());
    for (auto const& p : c.problems)
        put_error(w, p);
}

/// A path the answer names must be one the reader would have let through.
std::string checked_path(reader& r) {
    auto path = r.text();
    if (r.ok())
        if (auto problem = fdl::relative_path_problem(path))
            r.fail("a data file path that " + *problem);
    return path;
}

/// What decoding an answer's contents has taken, against what the caller allows them: the
/// same sums as catalog_contents::memory_bytes, taken before each list is made. A reader
/// checks its contents against that limit before answering, so an honest answer fits.
class memory_charge {
public:
    memory_charge(reader& r, std::uint64_t limit) : r_(r), limit_(limit == 0 ? ~std::uint64_t{0} : limit) {}
    /// Charges `bytes`; past the limit, the answer is garbage.
    bool take(std::uint64_t bytes) {
        if (r_.ok() && bytes > limit_ - taken_)
            r_.fail("contents past the " + std::to_string(limit_) + " bytes of memory it was allowed");
        taken_ += r_.ok() ? bytes : 0;
        return r_.ok();
    }
    bool take(std::string const& s) { return take(s.size() > 15 ? s.size() + 1 : 0); }
    /// Charges a list of `n` items of `each` bytes and makes room for them.
    template <class T>
    bool take_list(std::vector<T>& list, std::size_t n) {
        if (!take(std::uint64_t{n} * sizeof(T)))
            return false;
        list.reserve(n);
        return true;
    }

private:
    reader& r_;
    std::uint64_t limit_;
    std::uint64_t taken_ = 0;
};

std::optional<catalog_contents> get_contents(reader& r, std::uint64_t max_files, std::uint64_t max_memory) {
    catalog_contents c;
    memory_charge charge(r, max_memory);
    charge.take(sizeof(c));
    c.format = r.text();
    c.data_path = r.text();
    charge.take(c.format);
    charge.take(c.data_path);
    c.last_snapshot = r.u64();
    if (r.ok() && !is_known_format(c.format))
        r.fail("a DuckLake format it does not read");
    auto snapshots = r.count(8, max_files);
    charge.take(std::uint64_t{snapshots} * sizeof(std::uint64_t));
    for (std::size_t i = 0; i < snapshots && r.ok(); ++i)
        c.retained_snapshots.push_back(r.u64());
    if (r.ok() && (c.retained_snapshots.empty() || c.retained_snapshots.back() != c.last_snapshot))
        r.fail("a last snapshot that is not the last one retained");
    std::uint64_t files = 0;
    auto tables = r.count(17, max_files);
    charge.take_list(c.tables, tables);
    for (std::size_t i = 0; i < tables && r.ok(); ++i) {
        catalog_table t;
        t.name = r.text();
        charge.take(t.name);
        t.renamed_columns = r.flag();
        auto n = r.count(34, max_files);
        files += n;
        charge.take_list(t.files, n);
        for (std::size_t j = 0; j < n && r.ok(); ++j) {
            catalog_data_file f;
            f.path = checked_path(r);
            f.rows = r.u64();
            f.bytes = r.u64();
            f.footer_bytes = r.optional_u64();
            if (r.flag())
                f.deletes = catalog_delete{checked_path(r), r.u64(), r.u64()};
            if (!charge.take(f.path) || (f.deletes && !charge.take(f.deletes->path)))
                break;
            t.files.push_back(std::move(f));
        }
        c.tables.push_back(std::move(t));
    }
    if (r.ok() && files > max_files)
        r.fail(std::to_string(files) + " data files");
    auto views = r.count(24, max_files);
    charge.take_list(c.views, views);
    for (std::size_t i = 0; i < views && r.ok(); ++i) {
        catalog_view v;
        v.name = r.text();
        v.dialect = r.text();
        v.sql = r.text(max_sql);
        if (!charge.take(v.name) || !charge.take(v.dialect) || !charge.take(v.sql))
            break;
        c.views.push_back(std::move(v));
    }
    // Every snapshot asked for can add its own live files: twice the limit at most.
    auto needed = r.count(16, 2 * max_files + 2);
    charge.take_list(c.needed, needed);
    for (std::size_t i = 0; i < needed && r.ok(); ++i) {
        fdl::needed_data_file n;
        n.path = checked_path(r);
        n.bytes = r.u64();
        if (!charge.take(n.path))
            break;
        c.needed.push_back(std::move(n));
    }
    auto problems = r.count(12, max_files + 1000);
    charge.take_list(c.problems, problems);
    for (std::size_t i = 0; i < problems && r.ok(); ++i)
        if (auto e = get_error(r); e && charge.take(e->message))
            c.problems.push_back(std::move(*e));
    if (!r.ok())
        return std::nullopt;
    return c;
}

} // namespace

std::string encode_frame_header(frame_kind kind, std::uint64_t length) {
    writer w;
    w.u32(frame_magic);
    w.u32(worker_protocol_version);
    w.u32(static_cast<std::uint32_t>(kind));
    w.u64(length);
    return w.take();
}

result<frame_header> decode_frame_header(std::string_view bytes, frame_kind expected, std::uint64_t max_length,
                                         std::string const& who) {
    reader r(bytes);
    auto magic = r.u32();
    auto version = r.u32();
    auto kind = r.u32();
    auto length = r.u64();
    if (!r.ok() || magic != frame_magic)
        return garbage(who, "not a frame of the catalog reader's protocol");
    if (version != worker_protocol_version)
        return garbage(who, "protocol version " + std::to_string(version) + ", this build speaks " +
                                std::to_string(worker_protocol_version));
    if (kind != static_cast<std::uint32_t>(expected))
        return garbage(who, "a frame of another kind");
    if (length > max_length)
        return make_error(catalog_errc::reader_limit, who + ": the catalog reader's answer of " +
                                                          std::to_string(length) + " bytes is more than the " +
                                                          std::to_string(max_length) + " accepted");
    return frame_header{expected, length};
}

std::string encode_request(worker_request const& request) {
    writer w;
    w.text(request.folder);
    w.u64(request.items.size());
    for (auto const& item : request.items) {
        w.text(item.name);
        w.text(item.options.memory_limit);
        w.u64(static_cast<std::uint64_t>(item.options.time_limit.count()));
        w.u64(item.options.max_files);
        w.u64(item.options.max_memory);
        w.u64(item.options.snapshots.size());
        for (auto s : item.options.snapshots)
            w.u64(s);
    }
    return w.take();
}

result<worker_request> decode_request(std::string_view payload) {
    reader r(payload);
    worker_request request;
    request.folder = r.text(4096);
    auto& items = request.items;
    auto n = r.count(40, 1024);
    for (std::size_t i = 0; i < n && r.ok(); ++i) {
        worker_item item;
        item.name = r.text();
        item.options.memory_limit = r.text(64);
        item.options.time_limit = std::chrono::milliseconds(static_cast<std::int64_t>(r.u64() & 0xffff'ffff'ffffULL));
        item.options.max_files = static_cast<std::size_t>(r.u64());
        item.options.max_memory = r.u64();
        auto snapshots = r.count(8, 1'000'000);
        for (std::size_t j = 0; j < snapshots && r.ok(); ++j)
            item.options.snapshots.push_back(r.u64());
        items.push_back(std::move(item));
    }
    if (!r.ok() || !r.at_end())
        return garbage("request", r.ok() ? "bytes after its end" : r.why());
    return request;
}

std::string encode_answer(std::vector<result<catalog_contents>> const& outcomes) {
    writer w;
    w.u64(outcomes.size());
    for (auto const& outcome : outcomes) {
        w.u8(outcome ? 0 : 1);
        if (outcome)
            put_contents(w, *outcome);
        else
            put_error(w, outcome.error());
    }
    return w.take();
}

result<std::vector<result<catalog_contents>>> decode_answer(std::string_view payload,
                                                            std::span<read_options const> items,
                                                            std::string const& who) {
    reader r(payload);
    std::vector<result<catalog_contents>> out;
    auto n = r.u64();
    if (r.ok() && n != items.size())
        r.fail(std::to_string(n) + " outcomes for " + std::to_string(items.size()) + " catalogs");
    for (std::size_t i = 0; i < items.size() && r.ok(); ++i) {
        auto tag = r.u8();
        if (tag == 0) {
            if (auto c = get_contents(r, items[i].max_files, items[i].max_memory))
                out.emplace_back(std::move(*c));
        } else if (tag == 1) {
            if (auto e = get_error(r))
                out.emplace_back(std::move(*e));
        } else {
            r.fail("an outcome tagged " + std::to_string(tag));
        }
    }
    if (!r.ok() || !r.at_end())
        return garbage(who, r.ok() ? "bytes after its end" : r.why());
    return out;
}

} // namespace mirror::catalog
