#pragma once
// OpenSSH allowed_signers files (ssh-keygen(1), ALLOWED SIGNERS): the keys a mirror trusts,
// configured out of band. Never built from an origin's fdl.json.

#include "verify/error.hpp"
#include "verify/ssh_cert.hpp"
#include "verify/ssh_key.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::verify {

/// One line: principals [options] keytype base64 [comment].
struct allowed_signer {
    std::size_t line = 0;
    std::string principals; ///< a pattern list, dequoted
    bool cert_authority = false;
    std::optional<std::string> namespaces;  ///< a pattern list
    std::optional<std::int64_t> valid_after;  ///< seconds since the epoch, inclusive
    std::optional<std::int64_t> valid_before; ///< seconds since the epoch, inclusive
    /// Security keys: accept a signature made without the user touching the key (the
    /// authenticator's user-presence flag clear). Not an OpenSSH 9.2 option (see
    /// docs/mirroring-rules.md): ssh-keygen skips a line that has it.
    bool no_touch_required = false;
    /// Security keys: require the user-verification flag (a PIN or biometric). Not an
    /// OpenSSH 9.2 option either.
    bool verify_required = false;
    std::string key_type;
    std::string key_blob;
};

struct allowed_signers {
    std::string path; ///< for messages
    std::vector<allowed_signer> entries;
    /// Lines that do not parse, each verify_errc::malformed_allowed_signers with
    /// "path:line: reason". Skipped, as OpenSSH skips them: a line that does not parse
    /// grants nothing, and one typo must not hold every version of a repository. Every
    /// command reports them loudly instead.
    std::vector<error> skipped;
};

/// Parses a whole file. Comments and blank lines are ignored; a line that does not parse
/// (unknown option, unquoted or unterminated value, bad time, bad key) is skipped and
/// recorded in `skipped`. Never fails today; the result type leaves room for a file that
/// cannot be read at all.
result<allowed_signers> parse_allowed_signers(std::string_view text, std::string path);

/// The warning every command gives for a skipped line: "path:line: reason (this line of
/// allowed_signers is skipped: it grants nothing)".
std::string skipped_line_warning(error const& skipped);

/// Parses a time as OpenSSH 9.2's parse_absolute_time does, into seconds since the epoch:
/// YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, each optionally followed by 'Z', 'z' or
/// "UTC" in any case (UTC; otherwise the local time zone, read as standard time even in
/// summer, as OpenSSH reads it). Like glibc's strptime, a field may start with white
/// space, the day is checked only to be 1 to 31 (31 February is 3 March) and the second
/// may be 60 or 61. nullopt for anything else, and for times at or before the epoch.
std::optional<std::int64_t> parse_signer_time(std::string_view text);

/// Decides whether a line of `signers` accepts `key` for `principal`, namespace `ns`,
/// at time `now`, as `ssh-keygen -Y verify -I principal` would. Starts from "untrusted";
/// the error says why no line accepted, most specific reason first: outside_validity,
/// security_key_flags, namespace_not_allowed, principal_not_allowed, untrusted_key.
/// For a security key's signature, `sk_flags` are the flags its authenticator set: a line
/// accepts it only with the user-presence flag (unless the line says no-touch-required),
/// and with the user-verification flag when the line says verify-required or the
/// certificate carries the critical option verify-required; a line that requires
/// verification accepts no signature of another kind of key (`sk_flags` absent).
/// For a signature made with a certificate, `certificate` is its certificate: only a
/// cert-authority line holding its CA can accept it, and the certificate must also name
/// the principal (check_certificate_authority).
result<allowed_signer const*> check_signer(allowed_signers const& signers, ssh_public_key const& key,
                                           std::string_view principal, std::string_view ns, std::int64_t now,
                                           ssh_certificate const* certificate = nullptr,
                                           std::optional<std::uint8_t> sk_flags = std::nullopt);

/// The lines that accept `key` for namespace `ns` at `now`, whatever the principal (who
/// signed a verified signature, for reports; find_principals is ssh-keygen's command).
/// Fails like check_signer when none does.
/// For a certificate, a cert-authority line accepts it when one of the certificate's
/// principals matches the line and the certificate allows it.
result<std::vector<allowed_signer const*>> find_signers(allowed_signers const& signers, ssh_public_key const& key,
                                                        std::optional<std::string_view> ns, std::int64_t now,
                                                        ssh_certificate const* certificate = nullptr,
                                                        std::optional<std::uint8_t> sk_flags = std::nullopt);

/// The items of a principals field as OpenSSH 9.2's find-principals reads them: split at
/// commas, up to the first empty item.
std::vector<std::string_view> principal_items(std::string_view field);

/// What `ssh-keygen -Y find-principals` (OpenSSH 9.2, sshsig_find_principals) answers for
/// `key` at `now`: the first line that holds the key (not a cert-authority line) and whose
/// valid-after/valid-before allow `now` gives its principals field as written; for a
/// certificate, the first cert-authority line holding its CA, where the certificate is a
/// user certificate with principals within its own validity, gives the certificate's
/// principals that match the line's patterns, each pattern alone and in the line's order
/// ('!' is not special, duplicates are kept, and the list stops at its first empty item).
/// namespaces= is not looked at unless `ns` is given (this build's -n). Fails with
/// principal_not_allowed when no line gives any principal.
result<std::string> find_principals(allowed_signers const& signers, ssh_public_key const& key,
                                    ssh_certificate const* certificate, std::int64_t now,
                                    std::optional<std::string_view> ns = std::nullopt);

} // namespace mirror::verify
