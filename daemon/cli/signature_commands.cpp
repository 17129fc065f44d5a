#include "daemon/cli/signature_commands.hpp"

#include "daemon/common/terminal_text.hpp"

#include "verify/allowed_signers.hpp"
#include "verify/signature_policy.hpp"
#include "verify/sshsig.hpp"

#include <cstdio>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <variant>

namespace mirror::daemon {

namespace {

constexpr int exit_rejected = 1;
constexpr int exit_usage = 2;
// An allowed_signers file is a list of keys; past this it is not one.
constexpr std::size_t max_allowed_signers_bytes = 16 * 1024 * 1024;

std::optional<std::string> read_file(std::string const& path, std::size_t limit, std::string& problem) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        problem = path + ": does not exist";
        return std::nullopt;
    }
    if (!std::filesystem::is_regular_file(path, ec)) {
        problem = path + ": cannot be read (not a file)";
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        problem = path + ": cannot be read";
        return std::nullopt;
    }
    std::string bytes;
    char chunk[65536];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        bytes.append(chunk, static_cast<std::size_t>(in.gcount()));
        if (bytes.size() > limit) {
            problem = path + ": larger than " + std::to_string(limit) + " bytes";
            return std::nullopt;
        }
    }
    return bytes;
}

std::string key_label(std::string const& type) {
    if (type == "ssh-ed25519")
        return "ED25519";
    if (type.starts_with("ecdsa-"))
        return "ECDSA";
    if (type == "ssh-rsa")
        return "RSA";
    if (type == "sk-ssh-ed25519@openssh.com")
        return "ED25519-SK";
    if (type == "sk-ecdsa-sha2-nistp256@openssh.com")
        return "ECDSA-SK";
    return type;
}

struct loaded {
    verify::allowed_signers signers;
    std::string armored;
    std::int64_t now = 0;
};

/// Reads the allowed_signers file, the signature and the time; returns an exit code on failure.
std::variant<loaded, int> load(std::string const& signers_path, std::string const& signature_path,
                               std::optional<std::string> const& verify_time) {
    loaded out;
    out.now = static_cast<std::int64_t>(std::time(nullptr));
    if (verify_time) {
        auto when = verify::parse_signer_time(*verify_time);
        if (!when) {
            print_error("--verify-time: '" + *verify_time + "' is not YYYYMMDD[HHMM[SS]][Z|UTC]");
            return exit_usage;
        }
        out.now = *when;
    }
    std::string problem;
    auto text = read_file(signers_path, max_allowed_signers_bytes, problem);
    if (!text) {
        daemon::print_error(problem);
        return exit_rejected;
    }
    auto signers = verify::parse_allowed_signers(*text, signers_path);
    if (!signers) {
        daemon::print_error(signers.error().message);
        return exit_rejected;
    }
    for (auto const& skipped : signers->skipped) // as ssh-keygen logs them, and goes on
        std::fprintf(stderr, "warning: %s\n", terminal_safe(verify::skipped_line_warning(skipped), false).c_str());
    out.signers = std::move(*signers);
    auto armored = read_file(signature_path, verify::max_signature_bytes, problem);
    if (!armored) {
        daemon::print_error(problem);
        return exit_rejected;
    }
    out.armored = std::move(*armored);
    return out;
}

} // namespace

int run_check_signature(check_signature_command const& cmd) {
    auto inputs = load(cmd.allowed_signers, cmd.signature_file, cmd.verify_time);
    if (auto const* code = std::get_if<int>(&inputs))
        return *code;
    auto const& in = std::get<loaded>(inputs);
    std::string message((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    auto signature = verify::verify_sshsig(in.armored, message, cmd.ns);
    if (!signature) {
        daemon::print_error(cmd.signature_file + ": " + signature.error().message);
        return exit_rejected;
    }
    std::optional<std::uint8_t> flags;
    if (signature->security_key)
        flags = signature->security_key->flags;
    auto line = verify::check_signer(in.signers, signature->key, cmd.principal, cmd.ns, in.now,
                                     signature->certificate ? &*signature->certificate : nullptr, flags);
    if (!line) {
        daemon::print_error(line.error().message);
        return exit_rejected;
    }
    std::string label = key_label(signature->key.type) + (signature->certificate ? "-CERT" : "");
    std::printf("Good \"%s\" signature for %s with %s key %s\n", cmd.ns.c_str(), cmd.principal.c_str(),
                label.c_str(), verify::fingerprint(signature->key).c_str());
    return 0;
}

int run_find_principals(find_principals_command const& cmd) {
    auto inputs = load(cmd.allowed_signers, cmd.signature_file, cmd.verify_time);
    if (auto const* code = std::get_if<int>(&inputs))
        return *code;
    auto const& in = std::get<loaded>(inputs);
    // Like ssh-keygen, this reads the signature's key without checking the signature.
    auto blob = verify::dearmor(in.armored);
    auto signer = blob ? verify::parse_sshsig_signer(*blob) : result<verify::sshsig_signer>(blob.error());
    if (!signer) {
        daemon::print_error(cmd.signature_file + ": " + signer.error().message);
        return exit_rejected;
    }
    std::optional<std::string_view> ns;
    if (cmd.ns)
        ns = *cmd.ns;
    auto principals = verify::find_principals(in.signers, signer->key,
                                              signer->certificate ? &*signer->certificate : nullptr, in.now, ns);
    if (!principals) {
        daemon::print_error(principals.error().message);
        return exit_rejected;
    }
    // As ssh-keygen prints them: one per line, up to the first empty item (exit 0 even
    // when that leaves nothing to print).
    for (auto item : verify::principal_items(*principals)) {
        std::string shown = terminal_safe(item, false);
        std::printf("%s\n", shown.c_str());
    }
    return 0;
}

} // namespace mirror::daemon
