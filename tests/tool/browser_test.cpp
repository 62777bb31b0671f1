// The tool's two visual outputs opened in a real browser, headless Chromium:
// the known workload's perf.data (workload.hpp) as `kring report --svg`'s
// timeline and as `kring export --chrome`'s JSON in speedscope, the offline
// trace viewer (tools/dev/speedscope.sh). Each page is opened once: its DOM
// after the page's scripts ran (--dump-dom) and a screenshot (PNG), both
// checked against what was written. Each check returns its findings, so
// that the checks are also run on pages they must reject: a timeline
// without slices, one whose slices are not drawn, a JSON without them.
//
// Chromium (tools/dev/deps.sh: chromium-headless-shell, or $KRING_CHROMIUM)
// and speedscope (tools/dev/speedscope.sh fetch, or $KRING_SPEEDSCOPE, the
// folder of its index.html) missing: the tests say "skipped:" and why.
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload.hpp"

namespace {
using namespace kring_tool_test;

// One browser run: a bound that only a hung browser reaches (a page here
// loads in well under a second). The page's own time runs on Chromium's
// virtual clock, which waits for the loads and stops at the budget.
constexpr int browser_timeout_s = 60;
constexpr int virtual_time_budget_ms = 10000;

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// An executable named @name on $PATH.
std::optional<std::string> on_path(const std::string& name) {
    const char* p = std::getenv("PATH");
    std::istringstream in(p ? p : "/usr/bin:/bin");
    for (std::string dir; std::getline(in, dir, ':');) {
        const std::string f = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(f.c_str(), X_OK) == 0)
            return f;
    }
    return std::nullopt;
}

// The browser, or why there is none.
std::optional<std::string> chromium(std::string& why) {
    if (const char* e = std::getenv("KRING_CHROMIUM"); e && *e) {
        if (::access(e, X_OK) == 0)
            return std::string(e);
        why = std::string("KRING_CHROMIUM=") + e + " is not an executable";
        return std::nullopt;
    }
    for (const char* n : {"chromium-headless-shell", "chromium"})
        if (auto f = on_path(n))
            return f;
    why =
        "no chromium-headless-shell or chromium (tools/dev/deps.sh installs "
        "chromium-headless-shell)";
    return std::nullopt;
}

// The folder of speedscope's index.html, or why there is none.
std::optional<std::string> speedscope(std::string& why) {
    std::string dir;
    if (const char* e = std::getenv("KRING_SPEEDSCOPE"); e && *e) {
        dir = e;
    } else {
        char t[] = "/tmp/kring-speedscope.XXXXXX";
        const int fd = ::mkstemp(t);
        if (fd < 0) {
            why = "cannot create a temporary file";
            return std::nullopt;
        }
        ::close(fd);
        const int st =
            std::system((quote(KRING_SPEEDSCOPE_SH) + " dir >" + quote(t) + " 2>&1").c_str());
        std::string out = slurp(t);
        ::unlink(t);
        while (!out.empty() && out.back() == '\n')
            out.pop_back();
        if (st != 0) {
            why = out;
            return std::nullopt;
        }
        dir = out;
    }
    if (!fs::exists(dir + "/index.html")) {
        why = "no speedscope in " + dir + " (tools/dev/speedscope.sh fetch)";
        return std::nullopt;
    }
    return dir;
}

struct image {
    unsigned width = 0, height = 0;
    std::vector<std::uint8_t> rgb;  // row by row, 3 bytes a pixel
    std::string error;              // not empty: not a PNG libpng reads
};

image read_png(const std::string& path) {
    image img;
    png_image p{};
    p.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&p, path.c_str())) {
        img.error = path + ": " + p.message;
        return img;
    }
    p.format = PNG_FORMAT_RGB;
    img.rgb.resize(PNG_IMAGE_SIZE(p));
    if (!png_image_finish_read(&p, nullptr, img.rgb.data(), 0, nullptr)) {
        img.error = path + ": " + p.message;
        png_image_free(&p);
        return img;
    }
    img.width = p.width;
    img.height = p.height;
    return img;
}

struct rgb {
    int r, g, b;
};

std::optional<rgb> parse_colour(const std::string& s) {
    if (!std::regex_match(s, std::regex("#[0-9a-fA-F]{6}")))
        return std::nullopt;
    const auto v = std::stoul(s.substr(1), nullptr, 16);
    return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)};
}

// Pixels within 3 of @c in each channel (the rendering's rounding), in
// the rectangle [x0, x1) x [y0, y1).
std::uint64_t count_colour(const image& img, rgb c, double x0, double y0, double x1, double y1) {
    std::uint64_t n = 0;
    const unsigned xa = unsigned(std::max(0.0, std::floor(x0)));
    const unsigned ya = unsigned(std::max(0.0, std::floor(y0)));
    const unsigned xb = std::min(img.width, unsigned(std::max(0.0, std::ceil(x1))));
    const unsigned yb = std::min(img.height, unsigned(std::max(0.0, std::ceil(y1))));
    for (unsigned y = ya; y < yb; y++)
        for (unsigned x = xa; x < xb; x++) {
            const std::uint8_t* p = &img.rgb[(std::size_t(y) * img.width + x) * 3];
            if (std::abs(p[0] - c.r) <= 3 && std::abs(p[1] - c.g) <= 3 && std::abs(p[2] - c.b) <= 3)
                n++;
        }
    return n;
}

// The attributes of the first element on @line.
std::map<std::string, std::string> attributes(const std::string& line) {
    std::map<std::string, std::string> a;
    const auto end = line.find('>');
    static const std::regex attr(R"re(([-\w:]+)="([^"]*)")re");
    const std::string tag = line.substr(0, end);
    for (std::sregex_iterator it(tag.begin(), tag.end(), attr), last; it != last; ++it)
        a[(*it)[1]] = (*it)[2];
    return a;
}

// What a browser made of a page.
struct page {
    std::string dom;  // --dump-dom: the DOM after the page's scripts ran
    image shot;       // --screenshot
    std::string log;  // Chromium's stderr
};

class Browser : public ToolWorkload {
protected:
    void SetUp() override {
        ToolWorkload::SetUp();
        std::string why;
        if (auto c = chromium(why))
            chromium_ = *c;
        else
            GTEST_SKIP() << "skipped: " << why;
    }

    // Opens @url in a window of @w x @h pixels; @name names the files.
    page open(const std::string& url, unsigned w, unsigned h, const std::string& name) {
        const std::string png = path(name + ".png"), dom = path(name + ".dom"),
                          log = path(name + ".log"), profile = path(name + ".profile");
        const std::string cmd =
            "timeout -k 5 " + std::to_string(browser_timeout_s) + " " + quote(chromium_) +
            " --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader"
            " --no-first-run --hide-scrollbars --force-device-scale-factor=1"
            " --user-data-dir=" +
            quote(profile) + " --window-size=" + std::to_string(w) + "," + std::to_string(h) +
            " --virtual-time-budget=" + std::to_string(virtual_time_budget_ms) +
            " --screenshot=" + quote(png) + " --dump-dom " + quote(url) + " >" + quote(dom) +
            " 2>" + quote(log);
        const int st = std::system(cmd.c_str());
        page p;
        p.dom = slurp(dom);
        p.log = slurp(log);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
            << "chromium exited with " << (WIFEXITED(st) ? WEXITSTATUS(st) : -1)
            << (WIFEXITED(st) && WEXITSTATUS(st) == 124 ? " (timed out)" : "") << ":\n"
            << p.log;
        p.shot = read_png(png);
        return p;
    }

    // `kring report --svg` of the workload, as text.
    std::string svg() {
        const std::string f = path("t.svg");
        auto r = kring("report --svg " + quote(f) + " " + quote(file_));
        EXPECT_EQ(r.status, 0) << r.err;
        return slurp(f);
    }

    // Opens the SVG @text in a window of the size it declares.
    page open_svg(const std::string& text, const std::string& name) {
        const std::string f = path(name + ".svg");
        std::ofstream(f) << text;
        std::smatch m;
        if (!std::regex_search(text, m, svg_size)) {
            ADD_FAILURE() << "no width and height on the <svg>";
            return {};
        }
        return open("file://" + f, unsigned(std::stoul(m[1])), unsigned(std::stoul(m[2])), name);
    }
    static inline const std::regex svg_size{R"re(<svg[^>]* width="(\d+)" height="(\d+)")re"};

    // What is wrong with @p as the workload's timeline: the DOM (an SVG
    // document, one track per CPU, each with the slices of the CPU's two
    // tasks, told apart by colour) and the screenshot (the SVG's size,
    // each task's colour over most of its slices' area in its track).
    std::vector<std::string> svg_dom_problems(const page& p) const;
    std::vector<std::string> svg_pixel_problems(const page& p) const;

    // Opens @json in speedscope's @view ("time-ordered": the flame chart of
    // the first profile; "sandwich": its table of names).
    page open_speedscope(const std::string& release, const std::string& json,
                         const std::string& view, const std::string& name) {
        // How speedscope's own command line hands it a file: a script
        // calling loadFileFromBase64(), named in #localProfilePath=. An
        // alert (what speedscope does with a profile it cannot show) would
        // block the page: it goes to the title instead.
        const std::string js = path(name + ".js");
        std::ofstream(js) << "window.alert = function (m) { document.title = 'alert: ' + m; };\n"
                          << "speedscope.loadFileFromBase64('trace.json', '" << base64(json)
                          << "');\n";
        return open("file://" + release + "/index.html#localProfilePath=" + js + "&view=" + view,
                    speedscope_w, speedscope_h, name);
    }

    // What is wrong with speedscope showing the workload's JSON, in its
    // @chart and @table views: the profile loaded (the title speedscope
    // sets from its name), one profile per CPU, CPU 0's tasks in the
    // table, and the chart's screenshot of the window's size with the two
    // tasks' colours over a good part of it.
    std::vector<std::string> speedscope_problems(const page& chart, const page& table) const;
    static constexpr unsigned speedscope_w = 1200, speedscope_h = 300;

    static std::string base64(const std::string& s) {
        static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::string out;
        std::size_t i = 0;
        for (; i + 2 < s.size(); i += 3) {
            const unsigned v = unsigned(std::uint8_t(s[i])) << 16 |
                               unsigned(std::uint8_t(s[i + 1])) << 8 | std::uint8_t(s[i + 2]);
            out += {abc[v >> 18], abc[v >> 12 & 63], abc[v >> 6 & 63], abc[v & 63]};
        }
        if (i + 1 == s.size()) {
            const unsigned v = unsigned(std::uint8_t(s[i])) << 16;
            out += {abc[v >> 18], abc[v >> 12 & 63], '=', '='};
        } else if (i + 2 == s.size()) {
            const unsigned v = unsigned(std::uint8_t(s[i])) << 16 | unsigned(std::uint8_t(s[i + 1]))
                                                                        << 8;
            out += {abc[v >> 18], abc[v >> 12 & 63], abc[v >> 6 & 63], '='};
        }
        return out;
    }

    std::string chromium_;
};

// The tracks as the DOM holds them.
struct slice_rect {
    double x, y, w, h;
    std::string fill, title;
};
struct track_rect {
    double x = 0, y = 0, w = 0, h = 0;  // the track's background
    std::vector<slice_rect> slices;
};

std::map<int, track_rect> tracks_of(const std::string& dom) {
    std::map<int, track_rect> tracks;
    static const std::regex g_cpu(R"re(<g class="cpu" id="cpu(\d+)">)re");
    static const std::regex title("<title>([^<]*)</title>");
    track_rect* cur = nullptr;
    std::smatch m;
    for (const auto& line : lines_of(dom)) {
        if (std::regex_search(line, m, g_cpu)) {
            cur = &tracks[std::stoi(m[1])];
        } else if (line.find("</g>") != std::string::npos) {
            cur = nullptr;
        } else if (cur && line.rfind("<rect ", 0) == 0) {
            auto a = attributes(line);
            auto num = [&](const char* k) { return a.count(k) ? std::atof(a[k].c_str()) : -1.0; };
            if (std::regex_search(line, m, title))
                cur->slices.push_back(
                    {num("x"), num("y"), num("width"), num("height"), a["fill"], m[1]});
            else
                cur->x = num("x"), cur->y = num("y"), cur->w = num("width"), cur->h = num("height");
        }
    }
    return tracks;
}

std::vector<std::string> Browser::svg_dom_problems(const page& p) const {
    std::vector<std::string> bad;
    if (p.dom.find("<svg") == std::string::npos)
        bad.push_back("the document is not an SVG");
    if (p.dom.find("parsererror") != std::string::npos)
        bad.push_back("Chromium could not parse the SVG");
    const auto tracks = tracks_of(p.dom);
    std::set<int> cpus;
    for (const auto& [cpu, t] : tracks)
        cpus.insert(cpu);
    if (cpus != std::set<int>{0, 1})
        bad.push_back("tracks for " + std::to_string(cpus.size()) + " CPUs, not for CPUs 0 and 1");
    for (const auto& [cpu, t] : tracks) {
        const std::string on = "CPU " + std::to_string(cpu) + ": ";
        std::size_t want = 0;
        for (const auto& s : w_.slices)
            want += std::get<0>(s) == cpu;
        if (t.slices.size() != want)
            bad.push_back(on + std::to_string(t.slices.size()) + " slices, not " +
                          std::to_string(want));
        if (cpu < 0 || cpu > 1)
            continue;
        std::map<std::string, std::set<std::string>> fills;  // by comm
        for (const auto& tk : w_.tasks[cpu])
            for (const auto& s : t.slices)
                if (s.title.rfind(tk.comm + " " + std::to_string(tk.pid) + "/", 0) == 0)
                    fills[tk.comm].insert(s.fill);
        for (const auto& tk : w_.tasks[cpu])
            if (fills[tk.comm].size() != 1)
                bad.push_back(on + tk.comm + "'s slices have " +
                              std::to_string(fills[tk.comm].size()) + " colours, not one");
        const auto& a = fills[w_.tasks[cpu][0].comm];
        const auto& b = fills[w_.tasks[cpu][1].comm];
        if (!a.empty() && a == b)
            bad.push_back(on + w_.tasks[cpu][0].comm + " and " + w_.tasks[cpu][1].comm +
                          " have the same colour " + *a.begin());
    }
    return bad;
}

std::vector<std::string> Browser::svg_pixel_problems(const page& p) const {
    std::vector<std::string> bad;
    if (!p.shot.error.empty())
        return {"no screenshot: " + p.shot.error};
    std::smatch m;
    if (!std::regex_search(p.dom, m, svg_size))
        return {"no width and height on the <svg>"};
    if (p.shot.width != std::stoul(m[1]) || p.shot.height != std::stoul(m[2]))
        bad.push_back("the screenshot is " + std::to_string(p.shot.width) + "x" +
                      std::to_string(p.shot.height) + ", the SVG " + std::string(m[1]) + "x" +
                      std::string(m[2]));
    for (const auto& [cpu, t] : tracks_of(p.dom)) {
        // Per colour: the area its slices cover but for a pixel at each
        // edge (shared with the neighbour), and what the screenshot shows
        // of it within the track.
        std::map<std::string, double> area;
        for (const auto& s : t.slices)
            area[s.fill] += std::max(0.0, s.w - 2) * std::max(0.0, s.h - 2);
        for (const auto& [fill, want] : area) {
            const auto c = parse_colour(fill);
            if (!c) {
                bad.push_back("CPU " + std::to_string(cpu) + ": the fill " + fill +
                              " is not #rrggbb");
                continue;
            }
            const auto got = count_colour(p.shot, *c, t.x, t.y, t.x + t.w, t.y + t.h);
            if (double(got) < 0.8 * want)
                bad.push_back("CPU " + std::to_string(cpu) + ": " + fill + " on " +
                              std::to_string(got) + " pixels of the track, its slices cover " +
                              std::to_string(std::uint64_t(want)));
        }
    }
    return bad;
}

std::string text_of(const std::string& html) {
    static const std::regex tag("<[^>]*>");
    static const std::regex space("\\s+");
    return std::regex_replace(std::regex_replace(html, tag, " "), space, " ");
}

std::vector<std::string> Browser::speedscope_problems(const page& chart, const page& table) const {
    std::vector<std::string> bad;
    for (const page* p : {&chart, &table}) {
        const std::string view = p == &chart ? "chart: " : "table: ";
        std::smatch m;
        static const std::regex title("<title>([^<]*)</title>");
        const std::string t = std::regex_search(p->dom, m, title) ? std::string(m[1]) : "";
        if (t != "trace.json - speedscope")
            bad.push_back(view + "the title is \"" + t + "\", not the profile's: not loaded");
        const std::string text = text_of(p->dom);
        for (int cpu : {0, 1}) {
            const std::string name =
                "CPUs (pid 0), CPU " + std::to_string(cpu) + " (tid " + std::to_string(cpu) + ")";
            if (text.find(name) == std::string::npos)
                bad.push_back(view + "no profile \"" + name + "\"");
        }
    }
    // The sandwich table of the profile shown, CPU 0's: its tasks.
    const std::string text = text_of(table.dom);
    const auto names = text.find("Symbol Name");
    for (const auto& tk : w_.tasks[0])
        if (names == std::string::npos ||
            text.find(" " + tk.comm + " ", names) == std::string::npos)
            bad.push_back("table: CPU 0's task " + tk.comm + " is not in it");
    const image& shot = chart.shot;
    if (!shot.error.empty()) {
        bad.push_back("chart: no screenshot: " + shot.error);
        return bad;
    }
    if (shot.width != speedscope_w || shot.height != speedscope_h)
        bad.push_back("chart: the screenshot is " + std::to_string(shot.width) + "x" +
                      std::to_string(shot.height) + ", the window " + std::to_string(speedscope_w) +
                      "x" + std::to_string(speedscope_h));
    // The flame chart of CPU 0: the two tasks' slices in turn, each in a
    // colour of its own (speedscope's pastels; grey, black and white are
    // its frame).
    std::map<std::uint32_t, std::uint64_t> colours;
    for (std::size_t i = 0; i + 2 < shot.rgb.size(); i += 3) {
        const int r = shot.rgb[i], g = shot.rgb[i + 1], b = shot.rgb[i + 2];
        if (std::max({r, g, b}) - std::min({r, g, b}) > 40)
            colours[std::uint32_t(r << 16 | g << 8 | b)]++;
    }
    const std::uint64_t pixels = std::uint64_t(shot.width) * shot.height;
    int big = 0;
    for (const auto& [c, n] : colours)
        big += n * 20 > pixels;
    if (big < 2)
        bad.push_back("chart: " + std::to_string(big) +
                      " colours on over 5% of the screenshot, not the two tasks'");
    return bad;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += "  " + x + "\n";
    return s;
}

TEST_F(Browser, SvgTimelineShowsEachCpuTrackWithItsTasks) {
    const page p = open_svg(svg(), "timeline");
    EXPECT_EQ(svg_dom_problems(p), std::vector<std::string>{}) << p.dom;
    EXPECT_EQ(svg_pixel_problems(p), std::vector<std::string>{});
}

// The same checks reject a timeline without slices...
TEST_F(Browser, SvgChecksRejectATimelineWithoutSlices) {
    std::string text;
    for (const auto& l : lines_of(svg()))
        if (l.find("<title>") == std::string::npos || l.rfind("<title>", 0) == 0)
            text += l + "\n";
    const page p = open_svg(text, "empty");
    EXPECT_NE(svg_dom_problems(p), std::vector<std::string>{});
}

// ...and one whose slices are in the DOM but not drawn.
TEST_F(Browser, SvgChecksRejectSlicesNotDrawn) {
    const std::string text =
        std::regex_replace(svg(), std::regex("\"><title>"), "\" fill-opacity=\"0\"><title>");
    const page p = open_svg(text, "undrawn");
    EXPECT_EQ(svg_dom_problems(p), std::vector<std::string>{});
    const auto bad = svg_pixel_problems(p);
    EXPECT_FALSE(bad.empty());
    for (const auto& b : bad)
        EXPECT_NE(b.find(" on 0 pixels"), std::string::npos) << b;
}

class BrowserSpeedscope : public Browser {
protected:
    void SetUp() override {
        Browser::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        std::string why;
        if (auto d = speedscope(why))
            release_ = *d;
        else
            GTEST_SKIP() << "skipped: " << why;
    }

    std::string chrome_json() {
        const std::string f = path("trace.json");
        auto r = kring("export --chrome " + quote(f) + " " + quote(file_));
        EXPECT_EQ(r.status, 0) << r.err;
        return slurp(f);
    }

    std::string release_;
};

TEST_F(BrowserSpeedscope, ChromeJsonOpensWithOneProfilePerCpu) {
    const std::string json = chrome_json();
    const page chart = open_speedscope(release_, json, "time-ordered", "chart");
    const page table = open_speedscope(release_, json, "sandwich", "table");
    EXPECT_EQ(speedscope_problems(chart, table), std::vector<std::string>{})
        << text_of(chart.dom) << "\n"
        << text_of(table.dom) << "\n"
        << chart.log;
}

// The same checks reject a JSON without the slices.
TEST_F(BrowserSpeedscope, ChecksRejectAJsonWithoutSlices) {
    auto j = nlohmann::json::parse(chrome_json());
    auto& ev = j["traceEvents"];
    ev.erase(std::remove_if(ev.begin(), ev.end(), [](const auto& e) { return e["ph"] == "X"; }),
             ev.end());
    const std::string json = j.dump();
    const page chart = open_speedscope(release_, json, "time-ordered", "chart");
    const page table = open_speedscope(release_, json, "sandwich", "table");
    const auto bad = speedscope_problems(chart, table);
    EXPECT_GE(bad.size(), 3u) << joined(bad);  // not loaded, no tasks, no colours
    EXPECT_NE(std::find_if(bad.begin(), bad.end(),
                           [](const auto& b) { return b.rfind("chart: 0 colours", 0) == 0; }),
              bad.end())
        << joined(bad);
    EXPECT_NE(chart.dom.find("alert: "), std::string::npos) << text_of(chart.dom);
}

}  // namespace
