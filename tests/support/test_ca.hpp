#pragma once
// Throwaway certificate authorities and server certificates for the HTTPS tests, made
// with the openssl command-line tool (scripts/setup installs it).

#include <filesystem>
#include <string>

namespace mirror::test {

/// A certificate authority and a server certificate it issued.
struct tls_files {
    std::filesystem::path ca_cert;     ///< the CA's certificate: what a client trusts
    std::filesystem::path server_cert; ///< for localhost and 127.0.0.1, valid now
    std::filesystem::path server_key;
    std::filesystem::path ca_key;      ///< to issue more with issue_server_cert
};

/// A certificate and its private key.
struct issued_cert {
    std::filesystem::path cert;
    std::filesystem::path key;
};

struct cert_options {
    std::string subject_alt_name = "DNS:localhost,IP:127.0.0.1"; ///< openssl's syntax
    bool expired = false; ///< valid only from 2000-01-01 to 2000-01-02
};

/// Makes a new CA named `name` (letters, digits and '-') in `dir` (created if missing) and
/// a server certificate from it for DNS:localhost and IP:127.0.0.1. Files are
/// NAME-ca.pem, NAME-ca.key, NAME-server.pem and NAME-server.key, P-256 keys, valid for
/// two days from now. Two calls with different names give unrelated CAs: a client that
/// trusts one refuses the other's certificates. Throws std::runtime_error with openssl's
/// output when a command fails.
tls_files make_test_ca(std::filesystem::path const& dir, std::string const& name = "test");

/// Issues another server certificate from `ca` (made by make_test_ca), as NAME.pem and
/// NAME.key beside the CA's files: for other names, or expired. Throws
/// std::runtime_error with openssl's output when a command fails.
issued_cert issue_server_cert(tls_files const& ca, std::string const& name, cert_options const& options = {});

} // namespace mirror::test
