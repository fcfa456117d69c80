// kvc chart: the SVG parses as XML (tinyxml2) and has its parts (title, two lines with a
// point per sample, labelled axes with ticks, legend, totals); the measurement samples the
// positions it says; bad options are exit 2.
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "chart.hpp"
#include "command.hpp"
#include "model_test_helpers.hpp"

namespace {

using gen_test::kvc;
using gen_test::quote;
using tinyxml2::XMLElement;

// Every element with an id attribute, by id.
void collect_ids(XMLElement* e, std::map<std::string, XMLElement*>& by_id) {
  for (; e; e = e->NextSiblingElement()) {
    if (const char* id = e->Attribute("id")) by_id[id] = e;
    collect_ids(e->FirstChildElement(), by_id);
  }
}

int count_children(XMLElement* e, const char* name) {
  int n = 0;
  for (XMLElement* c = e ? e->FirstChildElement(name) : nullptr; c; c = c->NextSiblingElement(name)) ++n;
  return n;
}

// The points of a polyline, checked to lie inside the drawing.
std::vector<std::pair<double, double>> points(XMLElement* polyline, double width, double height) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(polyline->Attribute("points"));
  std::string pair;
  while (in >> pair) {
    const size_t comma = pair.find(',');
    EXPECT_NE(comma, std::string::npos) << pair;
    const double x = std::stod(pair.substr(0, comma)), y = std::stod(pair.substr(comma + 1));
    EXPECT_TRUE(x >= 0 && x <= width && y >= 0 && y <= height) << pair;
    out.push_back({x, y});
  }
  return out;
}

std::string text_of(XMLElement* e) { return e && e->GetText() ? e->GetText() : ""; }

TEST(chart, kvc_chart_writes_an_svg_with_every_part) {
  gen_test::TempDir dir;
  const std::string out = (dir / "why-cache.svg").string();
  const gen_test::Output r = kvc("chart --out " + quote(out) + " --max-position 8 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;

  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.LoadFile(out.c_str()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
  XMLElement* svg = doc.RootElement();
  ASSERT_STREQ(svg->Name(), "svg");
  EXPECT_STREQ(svg->Attribute("xmlns"), "http://www.w3.org/2000/svg");
  const double width = svg->DoubleAttribute("width"), height = svg->DoubleAttribute("height");
  EXPECT_GT(width, 100);
  EXPECT_GT(height, 100);
  EXPECT_NE(text_of(svg->FirstChildElement("title")).find("KV cache"), std::string::npos);

  std::map<std::string, XMLElement*> by_id;
  collect_ids(svg->FirstChildElement(), by_id);
  for (const char* id : {"title", "subtitle", "axes", "x-ticks", "y-ticks", "x-label", "y-label",
                         "with-cache", "without-cache", "without-cache-samples", "legend",
                         "summary", "sampling", "run-time"}) {
    EXPECT_TRUE(by_id.count(id)) << "no element with id " << id;
  }
  if (::testing::Test::HasFailure()) return;
  // Positions 1..8: the cached line samples each; the uncached one 1 and every quarter.
  EXPECT_STREQ(by_id["with-cache"]->Name(), "polyline");
  EXPECT_STREQ(by_id["without-cache"]->Name(), "polyline");
  EXPECT_EQ(points(by_id["with-cache"], width, height).size(), 8u);
  EXPECT_EQ(points(by_id["without-cache"], width, height).size(), 5u);
  EXPECT_EQ(count_children(by_id["without-cache-samples"], "circle"), 5);
  EXPECT_NE(text_of(by_id["x-label"]).find("position"), std::string::npos);
  EXPECT_NE(text_of(by_id["y-label"]).find("milliseconds per generated token"), std::string::npos);
  EXPECT_GE(count_children(by_id["x-ticks"], "text"), 3);
  EXPECT_GE(count_children(by_id["y-ticks"], "text"), 3);
  EXPECT_EQ(count_children(by_id["legend"], "line"), 2);
  EXPECT_NE(text_of(by_id["summary"]).find("x faster"), std::string::npos) << text_of(by_id["summary"]);
  EXPECT_NE(text_of(by_id["sampling"]).find("at every position"), std::string::npos);
}

TEST(chart, measure_chart_samples_what_it_says) {
  const gpt2::Model m = gpt2::Model::synthetic(1, model_test::small_config());
  const gpt2::ChartData d = gpt2::measure_chart(m, 20, "small");
  std::vector<int> cached, uncached;
  for (const auto& p : d.cached) cached.push_back(p.position);
  for (const auto& p : d.uncached) uncached.push_back(p.position);
  std::vector<int> every(20);
  for (int i = 0; i < 20; ++i) every[i] = i + 1;
  EXPECT_EQ(cached, every);
  EXPECT_EQ(uncached, (std::vector<int>{1, 5, 10, 15, 20}));
  for (const auto& p : d.cached) EXPECT_GT(p.ms, 0.0);
  EXPECT_GT(d.cached_total_s, 0.0);
  EXPECT_GT(d.uncached_total_s, 0.0);
  EXPECT_THROW(gpt2::measure_chart(m, 0, "small"), gpt2::ModelError);
  EXPECT_THROW(gpt2::measure_chart(m, 32, "small"), gpt2::ModelError);  // n_ctx 32

  // A long run samples about 48 positions with the cache, always the last one.
  const gpt2::Model wide = gpt2::Model::synthetic(1, [] {
    gpt2::Config c = model_test::small_config();
    c.n_ctx = 400;
    return c;
  }());
  const gpt2::ChartData w = gpt2::measure_chart(wide, 300, "small");
  EXPECT_EQ(w.cached_every, 6);
  EXPECT_EQ(w.cached.front().position, 1);
  EXPECT_EQ(w.cached.back().position, 300);
  EXPECT_EQ(w.cached.size(), 51u);  // 1, 6, 12, ..., 300
  EXPECT_EQ(w.uncached.size(), 5u);
}

TEST(chart, text_is_escaped) {
  gpt2::ChartData d;
  d.max_position = 3;
  d.cached = {{1, 1.0}, {3, 1.1}};
  d.uncached = {{1, 1.0}, {3, 3.0}};
  d.model = "a <model> & \"weights\"";
  tinyxml2::XMLDocument doc;
  const std::string svg = gpt2::chart_svg(d);
  ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
  EXPECT_NE(svg.find("a &lt;model&gt; &amp; &quot;weights&quot;"), std::string::npos);
  EXPECT_THROW(gpt2::chart_svg(gpt2::ChartData{}), gpt2::ModelError);
}

TEST(chart, bad_options_are_exit_2) {
  gen_test::TempDir dir;
  const std::string out = quote((dir / "x.svg").string());
  for (const std::string& args :
       {std::string("chart --max-position 8"), "chart --out " + out + " --max-position 0",
        "chart --out " + out + " --max-position 1024",
        "chart --out " + out + " --synthetic --weights w.safetensors",
        std::string("chart --out /nonexistent/dir/x.svg --max-position 2"),
        "chart --out " + out + " --weights /nonexistent.safetensors"}) {
    const gen_test::Output r = kvc(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "x.svg"));
}

}  // namespace
