#pragma once
// The events' secrets file (`events.secrets_file`, docs/events.md): each repository's webhook
// secret, and the token the S3 bucket notifications carry in their URL. A file of its own,
// readable by the daemon's user and not by others, so that the configuration itself holds
// no secret and can be shown, diffed and kept in version control.
//
//   webhooks:
//     population: "a secret of 16 bytes or more"
//   s3_token: "letters, digits and . _ ~ -, 16 or more"

#include "config/config_problem.hpp"

#include <boost/system/result.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::config {

struct event_secrets {
    std::map<std::string, std::string, std::less<>> webhooks; ///< repository name -> secret
    std::optional<std::string> s3_token;
    bool operator==(event_secrets const&) const = default;
};

using event_secrets_result = boost::system::result<event_secrets, config_problems>;

/// Reads and checks the secrets in `text`: each secret at least 16 bytes, the token URL-safe
/// (it is written in the notification endpoint's URL). No message quotes a secret.
event_secrets_result parse_event_secrets(std::string_view text, std::string_view file_name);

/// Reads the file at `path` (at most 1 MiB; refused when others than its owner and group may
/// read it) and parses it as parse_event_secrets does.
event_secrets_result load_event_secrets(std::filesystem::path const& path);

} // namespace mirror::config
