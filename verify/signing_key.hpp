#pragma once
// A private SSH key of the mirror's own, which signs what the mirror states about itself
// (its attestations) in the SSHSIG format, as `ssh-keygen -Y sign` signs: Ed25519, ECDSA
// (P-256, P-384, P-521) or RSA. Read from an unencrypted OpenSSH private key file, such
// as one systemd's LoadCredential= supplies; the key's bytes stay inside libssh and are
// never in a message.

#include "verify/error.hpp"
#include "verify/ssh_key.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace mirror::verify {

class signing_key {
public:
    /// Loads `file`. Refused, with the file and the reason: a file that cannot be read,
    /// that others than its owner may read or write (as OpenSSH refuses it), an encrypted
    /// key (no one is there to type a passphrase), a security key (it signs only with its
    /// authenticator present), a DSA key, or anything that is not a private key.
    static result<signing_key> load(std::filesystem::path const& file);

    signing_key(signing_key&&) noexcept;
    signing_key& operator=(signing_key&&) noexcept;
    ~signing_key();

    ssh_public_key const& public_key() const;
    /// "SHA256:…", as `ssh-keygen -l` prints it.
    std::string fingerprint() const;
    /// "TYPE BASE64", the public key as an allowed_signers line takes it.
    std::string public_key_text() const;

    /// The armored SSHSIG signature over `message` for namespace `ns` (SHA-512, as
    /// ssh-keygen signs), which `ssh-keygen -Y verify -n NS` accepts.
    result<std::string> sign(std::string_view message, std::string_view ns) const;

private:
    struct impl;
    explicit signing_key(std::unique_ptr<impl> state);
    std::unique_ptr<impl> state_;
};

} // namespace mirror::verify
