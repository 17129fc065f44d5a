#include "verify/signing_key.hpp"

#include "verify/errors.hpp"

#include <libssh/libssh.h>

#include <cerrno>
#include <cstring>

#include <sys/stat.h>

namespace mirror::verify {

struct signing_key::impl {
    ssh_key key = nullptr;
    ssh_public_key public_key;
    ~impl() { ssh_key_free(key); }
};

namespace {

error unusable(std::filesystem::path const& file, std::string const& why) {
    return make_error(verify_errc::unusable_signing_key, file.string() + ": " + why);
}

/// The key types that sign unattended; a security key needs its authenticator touched.
bool signs_unattended(enum ssh_keytypes_e type) {
    switch (type) {
    case SSH_KEYTYPE_ED25519:
    case SSH_KEYTYPE_ECDSA_P256:
    case SSH_KEYTYPE_ECDSA_P384:
    case SSH_KEYTYPE_ECDSA_P521:
    case SSH_KEYTYPE_RSA:
        return true;
    default:
        return false;
    }
}

} // namespace

signing_key::signing_key(std::unique_ptr<impl> state) : state_(std::move(state)) {}
signing_key::signing_key(signing_key&&) noexcept = default;
signing_key& signing_key::operator=(signing_key&&) noexcept = default;
signing_key::~signing_key() = default;

result<signing_key> signing_key::load(std::filesystem::path const& file) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0)
        return unusable(file, "cannot be read (" + std::string(std::strerror(errno)) + ")");
    if (!S_ISREG(info.st_mode))
        return unusable(file, "not a regular file");
    // As OpenSSH refuses it: a private key that others may read is no longer private.
    if ((info.st_mode & 077) != 0)
        return unusable(file, "others than its owner may read or write it (mode " +
                                  std::to_string(info.st_mode & 0777) +
                                  " in decimal): make it 0600 or 0400, or let systemd's LoadCredential= supply it");
    auto state = std::make_unique<impl>();
    // No passphrase callback: an encrypted key fails here rather than waiting for input.
    if (ssh_pki_import_privkey_file(file.c_str(), nullptr, nullptr, nullptr, &state->key) != SSH_OK ||
        state->key == nullptr)
        return unusable(file, "not an unencrypted OpenSSH (or PEM) private key");
    if (!ssh_key_is_private(state->key))
        return unusable(file, "holds no private key");
    auto const type = ssh_key_type(state->key);
    if (!signs_unattended(type))
        return unusable(file, std::string("a ") + (ssh_key_type_to_char(type) ? ssh_key_type_to_char(type) : "?") +
                                  " key cannot sign unattended: use an Ed25519, ECDSA or RSA key");
    char* base64 = nullptr;
    if (ssh_pki_export_pubkey_base64(state->key, &base64) != SSH_OK || base64 == nullptr)
        return unusable(file, "its public key cannot be derived");
    std::string const text = base64;
    ssh_string_free_char(base64);
    auto parsed = parse_public_key_text(ssh_key_type_to_char(type), text);
    if (!parsed)
        return unusable(file, "its public key is not one this verifier accepts: " + parsed.error().message);
    state->public_key = std::move(*parsed);
    return signing_key(std::move(state));
}

ssh_public_key const& signing_key::public_key() const { return state_->public_key; }

std::string signing_key::fingerprint() const { return verify::fingerprint(state_->public_key); }

std::string signing_key::public_key_text() const {
    char* base64 = nullptr;
    if (ssh_pki_export_pubkey_base64(state_->key, &base64) != SSH_OK || base64 == nullptr)
        return state_->public_key.type;
    std::string text = state_->public_key.type + " " + base64;
    ssh_string_free_char(base64);
    return text;
}

result<std::string> signing_key::sign(std::string_view message, std::string_view ns) const {
    std::string const namespace_text(ns);
    char* armored = nullptr;
    int rc = sshsig_sign(message.data(), message.size(), state_->key, nullptr, namespace_text.c_str(),
                         SSHSIG_DIGEST_SHA2_512, &armored);
    if (rc != SSH_OK || armored == nullptr)
        return make_error(verify_errc::unusable_signing_key,
                          "signing with " + fingerprint() + " failed (libssh's sshsig_sign)");
    std::string out = armored;
    ssh_string_free_char(armored);
    if (!out.empty() && out.back() != '\n')
        out += '\n';
    return out;
}

} // namespace mirror::verify
