#pragma once
// Where bytes read from a store or the network go: the one interface the HTTP client and
// every store backend write into.

#include "verify/error.hpp"
#include "core/io/net.hpp"

#include <cstddef>
#include <span>

namespace mirror::io {

/// Receives an object's bytes in order. Returning an error stops the read with it.
class byte_sink {
public:
    virtual ~byte_sink();
    virtual awaitable<result<void>> write(std::span<std::byte const> bytes) = 0;
};

} // namespace mirror::io
