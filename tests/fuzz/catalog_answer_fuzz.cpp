// libFuzzer target: what a sandboxed catalog reader answers, as the parent decodes it
// (core/catalog/worker_protocol.hpp). The reader has just read hostile bytes and may be
// subverted, so its answer is outside input. Besides the sanitizers: a decoded answer has
// exactly the outcomes asked for, within the file limit, every path passes the rules of a
// relative path, every code is a catalog code, and encoding it again decodes the same;
// a request and a frame header decode or are refused, never anything else.

#include "core/catalog/worker_protocol.hpp"

#include "core/catalog/errors.hpp"
#include "core/fdl/paths.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror;
using namespace mirror::catalog;
using mirror::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto input = fuzz::as_text(data, size);
    if (size == 0)
        return 0;
    // The first byte chooses how many catalogs were asked for, the file limit, and whether
    // their contents may take at most 4 KiB of memory.
    std::size_t items = data[0] % 4;
    std::uint64_t max_files = 1 + (data[0] & 0x7f) / 4;
    std::uint64_t max_memory = data[0] & 0x80 ? 4096 : 0;
    std::vector<read_options> asked(items);
    for (auto& options : asked) {
        options.max_files = max_files;
        options.max_memory = max_memory;
    }
    auto payload = input.substr(1);
    auto decoded = decode_answer(payload, asked, "c");
    if (decoded) {
        check(decoded->size() == items, "another number of outcomes than asked for", payload);
        for (auto const& outcome : *decoded) {
            if (!outcome) {
                check(outcome.error().code.category() == catalog_category(), "an outcome of another category", payload);
                continue;
            }
            std::uint64_t files = 0;
            for (auto const& t : outcome->tables) {
                files += t.files.size();
                for (auto const& f : t.files)
                    check(!fdl::relative_path_problem(f.path), "an unsafe table file path let through", payload);
            }
            check(files <= max_files, "more files than the limit", payload);
            check(max_memory == 0 || outcome->memory_bytes() <= max_memory, "contents past their memory", payload);
            for (auto const& n : outcome->needed)
                check(!fdl::relative_path_problem(n.path), "an unsafe needed path let through", payload);
            for (auto const& p : outcome->problems)
                check(p.code.category() == catalog_category(), "a problem of another category", payload);
        }
        auto again = decode_answer(encode_answer(*decoded), asked, "c");
        check(again.has_value() && encode_answer(*again) == encode_answer(*decoded), "a round trip that changes the answer",
              payload);
    } else {
        auto code = decoded.error().code;
        check(code == catalog_errc::reader_crashed, "a refusal of another kind", payload);
    }
    if (auto request = decode_request(payload))
        check(decode_request(encode_request(*request)).has_value(), "a request that does not round-trip", payload);
    for (auto kind : {frame_kind::hello, frame_kind::request, frame_kind::answer})
        if (auto header = decode_frame_header(payload, kind, 1 << 20, "c"))
            check(header->length <= (1 << 20), "a frame past its limit", payload);
    return 0;
}
