// The per-CPU timeline SVG (svg_timeline.hpp).
#include "svg_timeline.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace kring_tool {
namespace {

constexpr double width = 1200, left = 90, right = 20, top = 40, track_h = 22, gap = 6;

// Text for XML character data and attribute values: the five markup
// characters as entities, every byte outside printable ASCII as \xNN (a
// comm is bytes, not necessarily UTF-8, and XML refuses control bytes).
std::string xml(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                if (c < 0x20 || c >= 0x7f)
                    out += fmt::format("\\x{:02x}", c);
                else
                    out += char(c);
        }
    }
    return out;
}

// A stable colour per task: its tid hashed onto a hue, as #rrggbb. The hue
// comes from the hash's high bits: its low bits follow the tid's (tids 100,
// 200 and 400 shared one hue).
std::string colour(task_id t) {
    std::uint32_t h = t.tid * 2654435761u ^ t.pid * 40503u;
    double hue = double(std::uint64_t(h) * 360 >> 32), s = 0.55, l = 0.55;
    double c = (1 - std::fabs(2 * l - 1)) * s, x = c * (1 - std::fabs(std::fmod(hue / 60, 2) - 1));
    double m = l - c / 2, r = 0, g = 0, b = 0;
    if (hue < 60)
        r = c, g = x;
    else if (hue < 120)
        r = x, g = c;
    else if (hue < 180)
        g = c, b = x;
    else if (hue < 240)
        g = x, b = c;
    else if (hue < 300)
        r = x, b = c;
    else
        r = c, b = x;
    auto byte = [&](double v) { return unsigned(std::lround((v + m) * 255)); };
    return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

std::string duration(std::uint64_t ns) {
    if (ns >= 1000000)
        return fmt::format("{:.3f} ms", double(ns) / 1e6);
    if (ns >= 1000)
        return fmt::format("{:.3f} us", double(ns) / 1e3);
    return fmt::format("{} ns", ns);
}

}  // namespace

std::string render_svg_timeline(const trace_model& m) {
    const std::size_t tracks = m.cpus.size();
    const double plot_w = width - left - right;
    const double axis_y = top + double(tracks) * (track_h + gap) + 4;
    const double height = axis_y + 40;
    const std::uint64_t t0 = m.first_time;
    const std::uint64_t span = m.has_times && m.last_time > t0 ? m.last_time - t0 : 1;
    auto x_of = [&](std::uint64_t t) {
        const double rel = t > t0 ? double(t - t0) : 0.0;
        return left + std::min(rel / double(span), 1.0) * plot_w;
    };

    std::string s;
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    s += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{:.0f}\" "
        "height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"monospace\" "
        "font-size=\"12\">\n",
        width, height, width, height);
    s += fmt::format("<title>{}: tasks on each CPU</title>\n", xml(m.path));
    s += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    s += fmt::format("<text x=\"{:.0f}\" y=\"20\" font-size=\"14\">{}: {} CPUs, {}</text>\n", left,
                     xml(m.path), tracks, duration(m.has_times ? m.last_time - t0 : 0));

    std::size_t row = 0;
    for (std::int32_t cpu : m.cpus) {
        const double y = top + double(row++) * (track_h + gap);
        s += fmt::format("<g class=\"cpu\" id=\"cpu{}\">\n", cpu);
        s += fmt::format("<text x=\"8\" y=\"{:.1f}\">CPU {}</text>\n", y + track_h * 0.7, cpu);
        s += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
            "fill=\"#f2f2f2\"/>\n",
            left, y, plot_w, track_h);
        if (auto it = m.slices.find(cpu); it != m.slices.end()) {
            for (const auto& sl : it->second) {
                if (sl.task.pid == 0 && sl.task.tid == 0)
                    continue;  // idle: blank
                const double x = x_of(sl.start);
                const double w = std::max(x_of(sl.end) - x, 0.2);
                s += fmt::format(
                    "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
                    "fill=\"{}\"><title>{} {}/{} at {} for {}</title></rect>\n",
                    x, y + 1, w, track_h - 2, colour(sl.task), xml(m.comm_of(sl.task)), sl.task.pid,
                    sl.task.tid, format_time(sl.start), duration(sl.end - sl.start));
            }
        }
        s += "</g>\n";
    }

    // The time axis: ten ticks, relative to the first record.
    s += "<g class=\"axis\">\n";
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000000\"/>\n",
        left, axis_y, left + plot_w, axis_y);
    for (int i = 0; i <= 10; i++) {
        const double x = left + plot_w * i / 10;
        s += fmt::format(
            "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000000\"/>\n",
            x, axis_y, x, axis_y + 5);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x,
                         axis_y + 18, duration(std::uint64_t(double(span) * i / 10)));
    }
    s += fmt::format("<text x=\"8\" y=\"{:.1f}\">time</text>\n", axis_y + 18);
    s += "</g>\n</svg>\n";
    return s;
}

}  // namespace kring_tool
