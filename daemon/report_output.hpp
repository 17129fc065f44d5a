#pragma once
// Reports for people (a short summary) and machines (one JSON document; fields in
// docs/cli.md).

#include "core/sync/audit.hpp"
#include "core/sync/report.hpp"

#include <string>

namespace mirror::daemon {

std::string sync_summary(sync::sync_report const& report, std::string const& origin, std::string const& mirror);
std::string sync_json(sync::sync_report const& report, std::string const& origin, std::string const& mirror);
std::string audit_summary(sync::audit_report const& report, std::string const& repository);
std::string audit_json(sync::audit_report const& report, std::string const& repository);

/// "1.5 MiB", "312 B".
std::string human_bytes(std::uint64_t bytes);

} // namespace mirror::daemon
