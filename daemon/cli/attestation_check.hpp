#pragma once
// `fdl-mirror verify MIRROR --attestation-signers FILE [--max-age D] [--attestation-only]`:
// a consumer's check of a mirror's attestation (core/attest/check.hpp), and how verify
// reports it.

#include "core/attest/statement.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace mirror::daemon {

struct attestation_request {
    std::string signers_file; ///< the consumer's allowed_signers for attestations
    std::string ns;           ///< the namespace the attestations are signed for
    std::optional<std::chrono::seconds> max_age;
    std::size_t concurrency = 8;
    std::size_t max_bytes = attest::max_attestation_bytes; ///< attest::attestation_limit of the memory budget
};

struct attestation_outcome {
    int status = 0;      ///< 0 accepted; 1 refused (a reason per problem); 2 the file is unusable; 3 the mirror unreadable
    std::string summary; ///< lines for verify's summary
    std::string json;    ///< one JSON object for verify --json
};

/// Checks the attestation of the repository `repo` holds, running on `io`.
attestation_outcome check_attestation_of(net::io_context& io, store::store& repo, attestation_request const& request);

} // namespace mirror::daemon
