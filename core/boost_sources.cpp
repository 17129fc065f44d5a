// The compiled parts of header-only Boost libraries, built once for the whole program
// (BOOST_ASIO_SEPARATE_COMPILATION is set project-wide in the top CMakeLists.txt).
#include <boost/asio/impl/src.hpp>
#include <boost/json/src.hpp>
