#pragma once
// Writing one object to S3: a single PUT up to the multipart threshold, else a multipart
// upload whose parts go up as they fill, several at once within the store's budget of
// parallel parts, completed at commit and aborted when the writer is dropped.

#include "core/store/store.hpp"

#include <memory>
#include <string>

namespace mirror::store {

class s3_store;

/// A writer for `key` in `s3`, which must outlive it and any upload it leaves in flight.
/// Nothing is visible under the key before commit(); commit() with create_only sends
/// `If-None-Match: *` (store_errc::already_exists when the key exists, on stores that
/// honour it). A part that fails (after the client's retries) fails the next write() or
/// commit() with its error. Memory: the part being filled, plus at most
/// s3_store_settings::parallel_parts parts in flight across the whole store; a writer
/// that finds no free slot sends its part itself before taking more bytes.
std::unique_ptr<object_writer> make_s3_writer(s3_store& s3, std::string key, write_mode mode);

} // namespace mirror::store
