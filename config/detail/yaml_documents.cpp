#include "config/detail/yaml_documents.hpp"

#include <yaml-cpp/eventhandler.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace mirror::config::detail {

namespace {

/// Keeps where a document's root node is (the first node event), as YAML::Node::Mark()
/// would give it, and nothing else.
class root_place final : public YAML::EventHandler {
public:
    std::optional<YAML::Mark> mark;

    void OnDocumentStart(YAML::Mark const&) override {}
    void OnDocumentEnd() override {}
    void OnNull(YAML::Mark const& at, YAML::anchor_t) override { seen(at); }
    void OnAlias(YAML::Mark const& at, YAML::anchor_t) override { seen(at); }
    void OnScalar(YAML::Mark const& at, std::string const&, YAML::anchor_t, std::string const&) override { seen(at); }
    void OnSequenceStart(YAML::Mark const& at, std::string const&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        seen(at);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(YAML::Mark const& at, std::string const&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        seen(at);
    }
    void OnMapEnd() override {}

private:
    void seen(YAML::Mark const& at) {
        if (!mark)
            mark = at;
    }
};

} // namespace

yaml_documents load_documents(std::string const& text) {
    yaml_documents out;
    out.first = YAML::Load(text);
    // A second pass, with events only: yaml-cpp's node builder is not public, and the
    // first pass cannot say whether another document follows.
    std::istringstream in(text);
    YAML::Parser parser(in);
    // Three documents at most: the first, a second to report, and a third to tell a stray
    // character after the first document (where the parser also stops advancing) from a
    // real second document. A document starts after a "---" or "..." line, so after the
    // root of the one before; at the same place, the parser is going round in circles.
    std::optional<YAML::Mark> before;
    for (int document = 0; document < 3; ++document) {
        root_place root;
        if (!parser.HandleNextDocument(root))
            break;
        YAML::Mark at = root.mark.value_or(YAML::Mark());
        if (before && at.pos <= before->pos) {
            out.stuck = at;
            out.second.reset();
            break;
        }
        if (document == 1)
            out.second = at;
        before = at;
    }
    return out;
}

std::optional<std::string> read_config_file(std::filesystem::path const& path, std::uintmax_t max_size,
                                            std::string_view kind, problem_list& problems) {
    auto problem = [&](std::string message) {
        problems.add_whole_file("cannot read: " + std::move(message));
        return std::nullopt;
    };
    auto lower_first = [](std::string text) { // "permission denied", as our messages are written
        if (!text.empty())
            text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
        return text;
    };
    std::error_code ec;
    auto const status = std::filesystem::status(path, ec);
    if (status.type() == std::filesystem::file_type::not_found)
        return problem("no such file");
    if (ec)
        return problem(lower_first(ec.message()));
    if (!std::filesystem::is_regular_file(status))
        return problem("not a regular file");
    auto const size = std::filesystem::file_size(path, ec);
    if (ec)
        return problem(lower_first(ec.message()));
    if (size > max_size)
        return problem("larger than " + std::to_string(max_size >> 20) + "MiB, too large for " + std::string(kind));
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open())
        return problem("cannot open it");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return problem("the read failed");
    return text;
}

std::optional<YAML::Node> load_root(std::string const& text, std::string_view what, std::string_view if_empty,
                                    problem_list& problems) {
    yaml_documents documents;
    try {
        documents = load_documents(text);
    } catch (YAML::Exception const& e) {
        // yaml-cpp's own text ("end of map not found", "illegal map value"), at its place.
        problems.add(e.mark, "invalid YAML: " + e.msg);
        return std::nullopt;
    }
    if (documents.stuck) {
        problems.add(*documents.stuck, "invalid YAML: nothing can be read from here on");
        return std::nullopt;
    }
    if (documents.first.IsNull()) {
        problems.add_whole_file(std::string(if_empty));
        return std::nullopt;
    }
    if (documents.second)
        problems.add(*documents.second, "a second YAML document: " + std::string(what) + " is one document");
    if (!documents.first.IsMap()) {
        problems.add(documents.first.Mark(),
                     std::string(what) + " must be a mapping of keys, not " + std::string(kind_of(documents.first)));
        return std::nullopt;
    }
    return documents.first;
}

} // namespace mirror::config::detail
