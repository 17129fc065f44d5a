#include "config/detail/yaml_documents.hpp"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

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

} // namespace mirror::config::detail
