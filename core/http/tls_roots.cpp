#include "core/http/tls_roots.hpp"

namespace mirror::http {

void load_roots(boost::asio::ssl::context& tls, std::optional<std::filesystem::path> const& bundle,
                boost::system::error_code& ec) {
    if (bundle)
        tls.load_verify_file(bundle->string(), ec);
    else
        tls.set_default_verify_paths(ec);
}

std::string ca_bundle_problem(std::filesystem::path const& bundle) {
    boost::asio::ssl::context tls{boost::asio::ssl::context::tls_client};
    boost::system::error_code ec;
    load_roots(tls, bundle, ec);
    return ec ? "cannot be loaded as PEM certificates: " + ec.message() : std::string();
}

} // namespace mirror::http
