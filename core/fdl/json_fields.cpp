#include "core/fdl/json_fields.hpp"

#include "core/fdl/detail/json_duplicates.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parser.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/serialize.hpp>

#include <new>

namespace mirror::fdl {

// Deep enough for every FDL file; shallow enough that a hostile file cannot exhaust the
// stack or memory through nesting.
static constexpr std::size_t max_json_depth = 64;

namespace {

/// The heap, up to a cap: past it, std::bad_alloc. Below the arena of one tree, which
/// asks it for blocks of doubling size.
class capped_heap final : public boost::json::memory_resource {
public:
    explicit capped_heap(std::size_t cap) : cap_(cap) {}

private:
    void* do_allocate(std::size_t bytes, std::size_t align) override {
        if (bytes > cap_ - used_)
            throw std::bad_alloc();
        void* block = ::operator new(bytes, std::align_val_t(align));
        used_ += bytes;
        return block;
    }
    void do_deallocate(void* block, std::size_t bytes, std::size_t align) override {
        ::operator delete(block, std::align_val_t(align)); // unsized: clang declares no sized form by default
        used_ -= bytes;
    }
    bool do_is_equal(boost::json::memory_resource const& other) const noexcept override { return this == &other; }

    std::size_t cap_;
    std::size_t used_ = 0;
};

std::string mebibytes(std::size_t bytes) {
    return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

} // namespace

result<boost::json::value> parse_json(std::string_view text, std::string_view file, std::size_t max_tree_bytes) {
    boost::json::parse_options options;
    options.max_depth = max_json_depth;
    options.allow_invalid_utf8 = false;
    // Before the tree, never alongside it: the keys' check costs about the text's size.
    auto duplicate = detail::duplicate_json_key(text);
    boost::system::error_code ec;
    boost::json::value value;
    try {
        auto heap = boost::json::make_shared_resource<capped_heap>(max_tree_bytes);
        auto arena = boost::json::make_shared_resource<boost::json::monotonic_resource>(std::size_t{4096}, heap);
        // The parser's own stack (every value of an object is held there until the object
        // ends) draws on the same capped heap as the tree: an object of a million short
        // members once took 38 MiB of stack outside the cap.
        boost::json::parser parser(heap, options);
        parser.reset(arena);
        parser.write(text.data(), text.size(), ec);
        if (!ec)
            value = parser.release();
    } catch (std::bad_alloc const&) {
        return make_error(fdl_errc::too_large, std::string(file) + ": parsed, it would take more than " +
                                                   mebibytes(max_tree_bytes) +
                                                   " of memory, more than this process allows it (memory_limit)");
    }
    if (ec)
        return make_error(fdl_errc::bad_json, std::string(file) + ": not valid JSON (" + ec.message() + ")");
    // Two values for one key would be read two ways by two parsers: never take either.
    if (duplicate)
        return make_error(fdl_errc::bad_json, std::string(file) + ": the key '" + duplicate->substr(0, 200) +
                                                  "' appears twice in one object");
    return value;
}

object_fields::object_fields(boost::json::object const& object, std::string_view file, std::string where)
    : object_(&object), file_(file), where_(std::move(where)) {}

result<object_fields> object_fields::top(boost::json::value const& value, std::string_view file) {
    if (!value.is_object())
        return make_error(fdl_errc::wrong_type,
                          std::string(file) + ": expected a JSON object, found " + std::string(type_name(value)));
    return object_fields(value.get_object(), file, "");
}

boost::json::value const* object_fields::find(std::string_view key) const {
    return object_->if_contains(key);
}

std::string object_fields::name_of(std::string_view key) const {
    return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
}

error object_fields::fail(fdl_errc code, std::string_view key, std::string_view reason) const {
    return make_error(code, file_ + ": " + name_of(key) + ": " + std::string(reason));
}

template <class T, class Read>
field_reader& field_reader::take(T& out, Read read) {
    if (first_)
        return *this;
    auto got = read();
    if (!got)
        first_ = got.error();
    else
        out = std::move(*got);
    return *this;
}

field_reader& field_reader::string(std::string_view key, std::string& out) {
    return take(out, [&] { return fields_.string(key); });
}

field_reader& field_reader::optional_string(std::string_view key, std::optional<std::string>& out) {
    return take(out, [&] { return fields_.optional_string(key); });
}

field_reader& field_reader::count(std::string_view key, std::uint64_t& out) {
    return take(out, [&] { return fields_.count(key); });
}

field_reader& field_reader::optional_count(std::string_view key, std::optional<std::uint64_t>& out) {
    return take(out, [&] { return fields_.optional_count(key); });
}

field_reader& field_reader::optional_bool(std::string_view key, std::optional<bool>& out) {
    return take(out, [&] { return fields_.optional_bool(key); });
}

field_reader& field_reader::check(result<void> const& checked) {
    if (!first_ && !checked)
        first_ = checked.error();
    return *this;
}

result<void> field_reader::done() const {
    if (first_)
        return *first_;
    return {};
}

std::string_view type_name(boost::json::value const& value) noexcept {
    switch (value.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: return "a number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
    }
    return "a value";
}

std::optional<std::uint64_t> as_count(boost::json::value const& value) noexcept {
    if (value.is_uint64())
        return value.get_uint64();
    if (value.is_int64() && value.get_int64() >= 0)
        return static_cast<std::uint64_t>(value.get_int64());
    return std::nullopt;
}

result<std::optional<std::string>> object_fields::optional_string(std::string_view key) const {
    auto const* v = find(key);
    if (v == nullptr)
        return std::optional<std::string>();
    if (!v->is_string())
        return fail(fdl_errc::wrong_type, key, "expected a string, found " + std::string(type_name(*v)));
    return std::optional<std::string>(std::string(v->get_string()));
}

result<std::string> object_fields::string(std::string_view key) const {
    auto text = optional_string(key);
    if (!text)
        return text.error();
    if (!*text)
        return fail(fdl_errc::missing_field, key, "missing");
    return std::move(**text);
}

result<std::optional<std::uint64_t>> object_fields::optional_count(std::string_view key) const {
    auto const* v = find(key);
    if (v == nullptr)
        return std::optional<std::uint64_t>();
    auto n = as_count(*v);
    if (!n)
        return fail(v->is_number() ? fdl_errc::bad_value : fdl_errc::wrong_type, key,
                    "expected a non-negative integer, found " + boost::json::serialize(*v).substr(0, 40));
    return std::optional<std::uint64_t>(*n);
}

result<std::uint64_t> object_fields::count(std::string_view key) const {
    auto n = optional_count(key);
    if (!n)
        return n.error();
    if (!*n)
        return fail(fdl_errc::missing_field, key, "missing");
    return **n;
}

result<std::optional<bool>> object_fields::optional_bool(std::string_view key) const {
    auto const* v = find(key);
    if (v == nullptr)
        return std::optional<bool>();
    if (!v->is_bool())
        return fail(fdl_errc::wrong_type, key, "expected true or false, found " + std::string(type_name(*v)));
    return std::optional<bool>(v->get_bool());
}

result<std::optional<object_fields>> object_fields::optional_child(std::string_view key) const {
    auto const* v = find(key);
    if (v == nullptr)
        return std::optional<object_fields>();
    if (!v->is_object())
        return fail(fdl_errc::wrong_type, key, "expected an object, found " + std::string(type_name(*v)));
    return std::optional<object_fields>(object_fields(v->get_object(), file_, name_of(key)));
}

result<object_fields> object_fields::child(std::string_view key) const {
    auto c = optional_child(key);
    if (!c)
        return c.error();
    if (!*c)
        return fail(fdl_errc::missing_field, key, "missing");
    return std::move(**c);
}

result<boost::json::array const*> object_fields::optional_array(std::string_view key) const {
    static boost::json::array const empty; // function-local: constructed on first use
    auto const* v = find(key);
    if (v == nullptr)
        return &empty;
    if (!v->is_array())
        return fail(fdl_errc::wrong_type, key, "expected an array, found " + std::string(type_name(*v)));
    return &v->get_array();
}

} // namespace mirror::fdl
