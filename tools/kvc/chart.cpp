// The measurement and the SVG behind `kvc chart` (chart.hpp).
#include "chart.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "generate.hpp"

namespace gpt2 {

namespace {

double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// Best time in ms of `reps` runs of fn.
template <class Fn>
double best_ms(int reps, Fn fn) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_s();
    fn();
    const double ms = (now_s() - t0) * 1e3;
    if (r == 0 || ms < best) best = ms;
  }
  return best;
}

// Sum over positions 1 .. n of the time per token, linear between the sampled points (and
// flat beyond the first and last), in seconds.
double total_s(const std::vector<ChartPoint>& points, int n) {
  double sum_ms = 0;
  size_t i = 0;
  for (int p = 1; p <= n; ++p) {
    while (i + 1 < points.size() && points[i + 1].position <= p) ++i;
    const ChartPoint& a = points[i];
    if (p <= a.position || i + 1 == points.size()) {
      sum_ms += a.ms;
      continue;
    }
    const ChartPoint& b = points[i + 1];
    const double f = double(p - a.position) / (b.position - a.position);
    sum_ms += a.ms + f * (b.ms - a.ms);
  }
  return sum_ms * 1e-3;
}

std::vector<int> cached_positions(int n, int every) {
  std::vector<int> p{1};
  for (int q = every; q <= n; q += every) p.push_back(q);
  p.push_back(n);
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

std::vector<int> uncached_positions(int n) {
  std::vector<int> p{1};
  for (int i = 1; i <= 4; ++i) p.push_back(std::max(1, (n * i + 2) / 4));
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

}  // namespace

ChartData measure_chart(const Model& model, int max_position, const std::string& model_label) {
  const Config& c = model.config();
  if (max_position < 1 || max_position >= c.n_ctx) {
    throw ModelError("chart: max position " + std::to_string(max_position) + " is outside 1 .. " +
                     std::to_string(c.n_ctx - 1));
  }
  const double start = now_s();
  const int n = max_position;
  ChartData data;
  data.max_position = n;
  data.threads = model.threads();
  data.model = model_label;
  data.cached_every = std::max(1, n / 48);
  data.cached_reps = 3;
  std::vector<int> tokens(n + 1);  // [n + 1]: the context and the new token
  for (int i = 0; i <= n; ++i) tokens[i] = static_cast<int>((i * 7919LL + 13) % c.vocab);
  std::vector<float> logits(c.vocab);  // [vocab]

  // Without the cache: all p + 1 positions through every layer, from an empty cache.
  DecodeCache cache = make_decode_cache(model, n + 1);
  extend(model, cache, std::span<const int>(tokens.data(), 1), logits.data());  // warm-up
  for (int p : uncached_positions(n)) {
    const double ms = best_ms(data.uncached_reps, [&] {
      cache.length = 0;
      extend(model, cache, std::span<const int>(tokens.data(), p + 1), logits.data());
    });
    data.uncached.push_back({p, ms});
  }
  // With it: the last run above (p = n) left positions 0 .. n cached. Each sample forgets
  // the positions from p on and makes the token at p again (the same k, v row).
  for (int p : cached_positions(n, data.cached_every)) {
    const double ms = best_ms(data.cached_reps, [&] {
      cache.length = p;
      extend(model, cache, std::span<const int>(&tokens[p], 1), logits.data());
    });
    data.cached.push_back({p, ms});
  }
  data.cached_total_s = total_s(data.cached, n);
  data.uncached_total_s = total_s(data.uncached, n);
  data.run_s = now_s() - start;
  return data;
}

// ---- SVG -------------------------------------------------------------------------------

namespace {

constexpr int WIDTH = 820, HEIGHT = 560;
constexpr int LEFT = 80, RIGHT = 30, TOP = 78, BOTTOM = 130;  // plot margins
constexpr const char* CACHED_COLOR = "#1f6fb4";
constexpr const char* UNCACHED_COLOR = "#d62728";

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// A tick step of 1, 2 or 5 times a power of ten giving at most `max_ticks` intervals.
double nice_step(double range, int max_ticks) {
  if (!(range > 0)) return 1;
  for (double base = 1e-6;; base *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (range / (m * base) <= max_ticks) return m * base;
    }
  }
}

struct Plot {
  double x_max, y_max;
  double x(double position) const { return LEFT + position / x_max * (WIDTH - LEFT - RIGHT); }
  double y(double ms) const { return HEIGHT - BOTTOM - ms / y_max * (HEIGHT - TOP - BOTTOM); }
};

std::string text(const std::string& id, double x, double y, const std::string& body,
                 const std::string& extra = "") {
  return "<text id=\"" + id + "\" x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) + "\"" +
         extra + ">" + escape(body) + "</text>\n";
}

std::string axes(const Plot& plot, double x_step, double y_step) {
  const double x0 = plot.x(0), y0 = plot.y(0), x1 = plot.x(plot.x_max), y1 = plot.y(plot.y_max);
  std::string s = "<g id=\"axes\" stroke=\"#333333\" stroke-width=\"1\">\n";
  s += "<line x1=\"" + fmt("%.1f", x0) + "\" y1=\"" + fmt("%.1f", y0) + "\" x2=\"" +
       fmt("%.1f", x1) + "\" y2=\"" + fmt("%.1f", y0) + "\"/>\n";
  s += "<line x1=\"" + fmt("%.1f", x0) + "\" y1=\"" + fmt("%.1f", y0) + "\" x2=\"" +
       fmt("%.1f", x0) + "\" y2=\"" + fmt("%.1f", y1) + "\"/>\n</g>\n";
  s += "<g id=\"x-ticks\" font-size=\"12\" text-anchor=\"middle\">\n";
  for (double v = 0; v <= plot.x_max + 1e-9; v += x_step) {
    const std::string x = fmt("%.1f", plot.x(v));
    s += "<line x1=\"" + x + "\" y1=\"" + fmt("%.1f", y0) + "\" x2=\"" + x + "\" y2=\"" +
         fmt("%.1f", y0 + 5) + "\" stroke=\"#333333\"/>\n";
    s += "<text x=\"" + x + "\" y=\"" + fmt("%.1f", y0 + 20) + "\">" + fmt("%.0f", v) + "</text>\n";
  }
  s += "</g>\n<g id=\"y-ticks\" font-size=\"12\" text-anchor=\"end\">\n";
  const char* y_format = y_step >= 1 ? "%.0f" : (y_step >= 0.1 ? "%.1f" : "%.2f");
  for (double v = 0; v <= plot.y_max + 1e-9; v += y_step) {
    const std::string y = fmt("%.1f", plot.y(v));
    s += "<line x1=\"" + fmt("%.1f", x0) + "\" y1=\"" + y + "\" x2=\"" + fmt("%.1f", x1) +
         "\" y2=\"" + y + "\" stroke=\"#e4e4e4\"/>\n";
    s += "<text x=\"" + fmt("%.1f", x0 - 8) + "\" y=\"" + fmt("%.1f", plot.y(v) + 4) + "\">" +
         fmt(y_format, v) + "</text>\n";
  }
  s += "</g>\n";
  s += text("x-label", (x0 + x1) / 2, y0 + 44, "position: tokens already in the context",
            " text-anchor=\"middle\"");
  const double ly = (y0 + y1) / 2;
  s += text("y-label", 22, ly, "milliseconds per generated token",
            " text-anchor=\"middle\" transform=\"rotate(-90 22 " + fmt("%.1f", ly) + ")\"");
  return s;
}

std::string line(const Plot& plot, const std::vector<ChartPoint>& points, const std::string& id,
                 const char* color, bool dots) {
  std::string pts;
  for (const ChartPoint& p : points) {
    if (!pts.empty()) pts += ' ';
    pts += fmt("%.1f", plot.x(p.position)) + "," + fmt("%.1f", plot.y(p.ms));
  }
  std::string s = "<polyline id=\"" + id + "\" fill=\"none\" stroke=\"" + color +
                  "\" stroke-width=\"2.5\" stroke-linejoin=\"round\" points=\"" + pts + "\"/>\n";
  if (dots) {
    s += "<g id=\"" + id + "-samples\" fill=\"" + color + "\">\n";
    for (const ChartPoint& p : points) {
      s += "<circle cx=\"" + fmt("%.1f", plot.x(p.position)) + "\" cy=\"" +
           fmt("%.1f", plot.y(p.ms)) + "\" r=\"3.5\"/>\n";
    }
    s += "</g>\n";
  }
  return s;
}

std::string legend(const ChartData& d) {
  const double x = LEFT + 20, y = TOP + 16;
  std::string s = "<g id=\"legend\" font-size=\"13\">\n";
  const std::string rows[2] = {
      "with the cache: " + fmt("%.1f", d.cached.back().ms) + " ms at position " +
          std::to_string(d.max_position),
      "without (recompute every position): " + fmt("%.0f", d.uncached.back().ms) +
          " ms at position " + std::to_string(d.max_position)};
  const char* colors[2] = {CACHED_COLOR, UNCACHED_COLOR};
  for (int i = 0; i < 2; ++i) {
    const double yy = y + 22 * i;
    s += "<line x1=\"" + fmt("%.1f", x) + "\" y1=\"" + fmt("%.1f", yy - 4) + "\" x2=\"" +
         fmt("%.1f", x + 28) + "\" y2=\"" + fmt("%.1f", yy - 4) + "\" stroke=\"" + colors[i] +
         "\" stroke-width=\"3\"/>\n";
    s += "<text x=\"" + fmt("%.1f", x + 36) + "\" y=\"" + fmt("%.1f", yy) + "\">" +
         escape(rows[i]) + "</text>\n";
  }
  return s + "</g>\n";
}

}  // namespace

std::string chart_svg(const ChartData& d) {
  if (d.cached.empty() || d.uncached.empty()) throw ModelError("chart: no measurements");
  double top = 0;
  for (const auto* line : {&d.cached, &d.uncached})
    for (const ChartPoint& p : *line) top = std::max(top, p.ms);
  const double y_step = nice_step(top * 1.05, 6), x_step = nice_step(d.max_position, 8);
  Plot plot{std::max(1.0, double(d.max_position)), 0};
  plot.y_max = y_step * static_cast<int>(top * 1.05 / y_step + 1);

  const std::string title = "Why a KV cache: the time to generate one token";
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(WIDTH) +
       "\" height=\"" + std::to_string(HEIGHT) + "\" viewBox=\"0 0 " + std::to_string(WIDTH) +
       " " + std::to_string(HEIGHT) + "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
  s += "<title>" + escape(title) + "</title>\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  s += text("title", LEFT, 32, title, " font-size=\"20\" font-weight=\"bold\"");
  s += text("subtitle", LEFT, 54,
            d.model + ", " + std::to_string(d.threads) + " thread(s), positions 1 to " +
                std::to_string(d.max_position),
            " font-size=\"13\" fill=\"#555555\"");
  s += axes(plot, x_step, y_step);
  s += line(plot, d.uncached, "without-cache", UNCACHED_COLOR, true);
  s += line(plot, d.cached, "with-cache", CACHED_COLOR, false);
  s += legend(d);
  const double speedup = d.uncached_total_s / std::max(d.cached_total_s, 1e-9);
  s += text("summary", LEFT, HEIGHT - 62,
            "Tokens 1 to " + std::to_string(d.max_position) + ", one by one: " +
                fmt("%.1f", d.cached_total_s) + " s with the cache, " +
                fmt("%.0f", d.uncached_total_s) + " s without (" + fmt("%.1f", speedup) +
                "x faster)",
            " font-size=\"14\" font-weight=\"bold\"");
  s += text("sampling", LEFT, HEIGHT - 38,
            "Sampled: with the cache " +
                (d.cached_every == 1 ? std::string("at every position")
                                     : "every " + std::to_string(d.cached_every) + " positions") +
                " (best of " +
                std::to_string(d.cached_reps) + "), without at the " +
                std::to_string(d.uncached.size()) +
                " dots; totals interpolate between samples.",
            " font-size=\"12\" fill=\"#555555\"");
  s += text("run-time", LEFT, HEIGHT - 20,
            "Measured by kvc chart in " + fmt("%.1f", d.run_s) + " s.",
            " font-size=\"12\" fill=\"#555555\"");
  return s + "</svg>\n";
}

}  // namespace gpt2
