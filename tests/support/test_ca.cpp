#include "tests/support/test_ca.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mirror::test {

namespace fs = std::filesystem;

namespace {

// Paths go to the shell inside single quotes; a temporary folder has none of its own.
std::string quoted(fs::path const& path) { return "'" + path.string() + "'"; }

void write_text(fs::path const& path, std::string const& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        throw std::runtime_error(path.string() + ": cannot write");
}

std::string read_text(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs `openssl ARGS` in `dir`, its output appended to dir/openssl.log.
void openssl(fs::path const& dir, std::string const& args) {
    std::string command = "cd " + quoted(dir) + " && openssl " + args + " >>openssl.log 2>&1";
    if (std::system(command.c_str()) != 0)
        throw std::runtime_error("openssl " + args + " failed in " + dir.string() + ":\n" +
                                 read_text(dir / "openssl.log"));
}

/// One configuration for both `openssl req` and `openssl ca`, so that nothing comes from
/// the system's openssl.cnf. `openssl ca` (not `x509 -req`) signs, because only it takes a
/// start date in OpenSSL 3.0 (`x509 -not_before` arrived in 3.4): expired certificates.
std::string config_for(std::string const& ca_name, std::string const& subject_alt_name) {
    return "[req]\n"
           "distinguished_name = dn\n"
           "[dn]\n"
           "[v3_ca]\n"
           "basicConstraints = critical,CA:TRUE\n"
           "keyUsage = critical,keyCertSign,cRLSign\n"
           "subjectKeyIdentifier = hash\n"
           "[server_ext]\n"
           "basicConstraints = critical,CA:FALSE\n"
           "keyUsage = critical,digitalSignature\n"
           "extendedKeyUsage = serverAuth\n"
           "subjectAltName = " + subject_alt_name + "\n"
           "subjectKeyIdentifier = hash\n"
           "authorityKeyIdentifier = keyid\n"
           "[ca]\n"
           "default_ca = this_ca\n"
           "[this_ca]\n"
           "certificate = " + ca_name + "-ca.pem\n"
           "private_key = " + ca_name + "-ca.key\n"
           "database = " + ca_name + "-ca.index\n"
           "new_certs_dir = " + ca_name + "-ca.issued\n"
           "rand_serial = yes\n"
           "unique_subject = no\n"
           "default_md = sha256\n"
           "policy = any_name\n"
           "copy_extensions = none\n"
           "[any_name]\n"
           "commonName = supplied\n";
}

constexpr char const* new_p256_key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc";

// The CA's name is the part of its certificate's file name before "-ca.pem".
std::string ca_name_of(tls_files const& ca) {
    std::string file = ca.ca_cert.filename().string();
    return file.substr(0, file.size() - std::string("-ca.pem").size());
}

} // namespace

tls_files make_test_ca(fs::path const& dir, std::string const& name) {
    fs::create_directories(dir / (name + "-ca.issued"));
    write_text(dir / (name + "-ca.index"), "");
    write_text(dir / (name + "-ca.cnf"), config_for(name, "DNS:localhost"));
    openssl(dir, "req -x509 -new -config " + name + "-ca.cnf -extensions v3_ca " + new_p256_key + " -keyout " +
                     name + "-ca.key -out " + name + "-ca.pem -days 2 -subj '/CN=fdl-mirror test CA " + name + "'");
    tls_files out{dir / (name + "-ca.pem"), {}, {}, dir / (name + "-ca.key")};
    auto server = issue_server_cert(out, name + "-server");
    out.server_cert = server.cert;
    out.server_key = server.key;
    return out;
}

issued_cert issue_server_cert(tls_files const& ca, std::string const& name, cert_options const& options) {
    fs::path dir = ca.ca_cert.parent_path();
    std::string ca_name = ca_name_of(ca);
    write_text(dir / (name + ".cnf"), config_for(ca_name, options.subject_alt_name));
    openssl(dir, "req -new -config " + name + ".cnf " + new_p256_key + " -keyout " + name + ".key -out " + name +
                     ".csr -subj /CN=localhost");
    // UTCTime, as `openssl ca -help` spells it: YYMMDDHHMMSSZ.
    std::string validity = options.expired ? "-startdate 000101000000Z -enddate 000102000000Z" : "-days 2";
    openssl(dir, "ca -batch -config " + name + ".cnf -extensions server_ext -notext -in " + name + ".csr -out " +
                     name + ".pem " + validity);
    return {dir / (name + ".pem"), dir / (name + ".key")};
}

} // namespace mirror::test
