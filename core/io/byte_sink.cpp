#include "core/io/byte_sink.hpp"

namespace mirror::io {

byte_sink::~byte_sink() = default;

} // namespace mirror::io
