// libFuzzer target: the values an operator writes in the configuration and on the command
// line (config/units.hpp, values.hpp, listen_address.hpp): durations, sizes, percentages,
// counts, signature policies and listen addresses. Besides the sanitizers: each value the
// parsers accept is within its stated range, and what the formatters write reads back as
// the same value.

#include "config/listen_address.hpp"
#include "config/units.hpp"
#include "config/values.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror::config;
using mirror::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    if (auto d = parse_duration(text)) {
        check(d->count() >= 0, "a negative duration accepted", text);
        auto written = format_duration(*d);
        check(parse_duration(written) == d, "a formatted duration reads back different", written);
    }
    if (auto s = parse_size(text)) {
        auto written = format_size(*s);
        check(parse_size(written) == s, "a formatted size reads back different", written);
    }
    if (auto p = parse_percentage(text))
        check(*p >= 0 && *p <= 1, "a percentage outside 0%..100% accepted", text);
    for (std::uint64_t max : {std::uint64_t{1}, std::uint64_t{1024}, UINT64_MAX})
        if (auto n = parse_count(text, max))
            check(*n >= 1 && *n <= max, "a count outside its range accepted", text);
    if (auto policy = parse_signature_policy(text))
        check(parse_signature_policy(to_string(*policy)) == policy, "a policy's name reads back different", text);
    if (auto address = parse_listen_address(text)) {
        check(!address->host.empty(), "a listen address without a host accepted", text);
        auto written = to_string(*address);
        auto again = parse_listen_address(written);
        check(again && again->host == address->host && again->port == address->port,
              "a listen address reads back different", written);
    }
    return 0;
}
