// Format detection for parse_dump(): looks at the first recognisable lines, never at file names.
#include "ibf/dumps.h"
#include "text.h"

namespace ibf {

std::string_view to_string(DumpFormat f) {
    switch (f) {
        case DumpFormat::Ibnetdiscover: return "ibnetdiscover";
        case DumpFormat::Iblinkinfo: return "iblinkinfo";
        case DumpFormat::IbdiagnetNet: return "ibdiagnet-net";
    }
    return "?";
}

std::optional<DumpFormat> detect_dump_format(std::string_view text) {
    using detail::is_digit;
    using detail::starts_with;
    detail::Lines lines(text);
    std::string_view raw;
    int ln = 0;
    bool net_like = false;     // ibnetdiscover grammar seen
    bool ibdiag_hint = false;  // a comment naming ibdiagnet
    bool in_switch = false;
    while (lines.next(raw, ln)) {
        std::string_view t = detail::trim(raw);
        if (t.empty()) continue;
        if (t.find("==(") != std::string_view::npos && t.find(")==>") != std::string_view::npos)
            return DumpFormat::Iblinkinfo;
        if (t[0] == '#') {
            if (t.find("ibdiag") != std::string_view::npos || t.find("IBDIAG") != std::string_view::npos) ibdiag_hint = true;
            continue;
        }
        std::string_view w = t.substr(0, t.find_first_of(" \t"));
        if ((w == "Switch" || w == "Ca" || w == "Hca" || w == "Rt") && t.size() > w.size() + 1 &&
            t.find('"') != std::string_view::npos) {
            net_like = true;
            in_switch = w == "Switch";
            continue;
        }
        if (starts_with(t, "vendid=") || starts_with(t, "switchguid=") || starts_with(t, "caguid=") ||
            starts_with(t, "sysimgguid=")) {
            net_like = true;
            continue;
        }
        if (net_like && t[0] == '[' && t.size() > 1 && is_digit(t[1])) {
            if (ibdiag_hint) return DumpFormat::IbdiagnetNet;
            // ibnetdiscover never writes "(...)" after a switch's own port number; ibdiagnet2 does.
            size_t close = t.find(']');
            if (in_switch && close != std::string_view::npos && close + 1 < t.size() && t[close + 1] == '(')
                return DumpFormat::IbdiagnetNet;
            if (in_switch) return DumpFormat::Ibnetdiscover;
        }
    }
    if (net_like) return ibdiag_hint ? DumpFormat::IbdiagnetNet : DumpFormat::Ibnetdiscover;
    return std::nullopt;
}

Fabric parse_dump(std::string_view text, const std::string& file) {
    auto f = detect_dump_format(text);
    if (!f)
        throw InputError(file, 0, 0,
                         "not a recognised fabric dump: expected ibnetdiscover output (\"Switch\"/\"Ca\" sections), "
                         "iblinkinfo output (\"==( ... )==>\" port lines) or an ibdiagnet2 ibnetdiscover-like dump");
    switch (*f) {
        case DumpFormat::Ibnetdiscover: return parse_ibnetdiscover(text, file);
        case DumpFormat::Iblinkinfo: return parse_iblinkinfo(text, file);
        case DumpFormat::IbdiagnetNet: return parse_ibdiagnet_net(text, file);
    }
    return parse_ibnetdiscover(text, file);
}

}  // namespace ibf
