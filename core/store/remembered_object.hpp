#pragma once
// What an HTTP origin store remembers of one small object for conditional requests, in a
// form that outlives the process (the daemon keeps it in its state folder).

#include <string>

namespace mirror::store {

/// One remembered object: rereading `key` sends `validator_header: validator`, and a 304
/// answer serves `bytes`. Plain data: http_store::restore checks it before trusting it.
struct remembered_object {
    std::string key;              ///< relative to the origin's base URL, e.g. "refs.json"
    std::string validator_header; ///< "If-None-Match" (an ETag) or "If-Modified-Since"
    std::string validator;        ///< the ETag or Last-Modified value, as the origin sent it
    std::string bytes;            ///< the object's content when the validator was sent

    friend bool operator==(remembered_object const&, remembered_object const&) = default;
};

} // namespace mirror::store
