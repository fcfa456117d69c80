#include "cli/html_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "cli/report.hpp"
#include "wire/digest.hpp"
#include "wire/tensor.hpp"

namespace course {

namespace {

constexpr size_t kMaxHeatmaps = 8;          // tensors drawn per case
constexpr int64_t kMaxHeatmapRows = 20000;  // cells drawn per tensor
constexpr int kCell = 22;                   // a block or request cell, in px
constexpr int kHeat = 9;                    // a heatmap cell, in px

// Text for HTML: escaped, and with the control characters the code under test may have
// put in it made visible (report.hpp).
std::string esc(const std::string& raw) {
  const std::string text = visible_controls(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
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
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(int64_t n) { return std::to_string(n); }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + num(shape[i]);
  return out + "]";
}

const json& at(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

const json& at(const json& j, size_t i) {
  static const json none;
  return j.is_array() && i < j.size() ? j[i] : none;
}

std::string int_or_dash(const json& j) {
  return j.is_number_integer() ? num(j.get<int64_t>()) : "–";
}

// An SVG cell: a box with a label, "diff" when the two answers disagree there.
std::string svg_cell(int x, int y, int w, const std::string& label, bool diff,
                     const std::string& title = "") {
  std::string out = "<g><rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
                    "\" height=\"" + num(kCell) + "\" class=\"" + (diff ? "diff" : "same") + "\"/>";
  if (!title.empty()) out += "<title>" + esc(title) + "</title>";
  out += "<text x=\"" + num(x + w / 2) + "\" y=\"" + num(y + kCell / 2 + 4) +
         "\" text-anchor=\"middle\">" + esc(label) + "</text></g>";
  return out;
}

std::string svg_text(int x, int y, const std::string& text, const char* cls = "label") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" class=\"" + cls + "\">" + esc(text) +
         "</text>";
}

std::string svg(int width, int height, const std::string& body, const std::string& label) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" + esc(label) +
         "\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" viewBox=\"0 0 " +
         num(width) + " " + num(height) + "\">" + body + "</svg>\n";
}

// ---- stage 7: block tables and reference counts

const json& sequences_of(const json& out) {
  const json& s = at(out, "sequences");
  return s.is_array() ? s : at(out, "branches");
}

bool has_block_tables(const json& expected) {
  const json& s = sequences_of(expected);
  return (s.is_array() && !s.empty() && at(s[0], "block_table").is_array()) ||
         at(expected, "ref_counts").is_array();
}

// One side's tables and counts; cells differ where `other` (the other side) has another value.
std::string block_side(const json& mine, const json& other, const std::string& who) {
  const json& seqs = sequences_of(mine);
  const json& other_seqs = sequences_of(other);
  const json& counts = at(mine, "ref_counts");
  const json& other_counts = at(other, "ref_counts");
  std::string body;
  int y = 4, width = 420;
  const int x0 = 190;
  for (size_t i = 0; seqs.is_array() && i < seqs.size(); ++i) {
    const json& table = at(seqs[i], "block_table");
    const json& other_table = at(at(other_seqs, i), "block_table");
    body +=
        svg_text(4, y + 15,
                 "sequence " + num(int64_t(i)) + " · length " + int_or_dash(at(seqs[i], "length")));
    const bool length_diff = at(seqs[i], "length") != at(at(other_seqs, i), "length");
    if (length_diff) body += svg_text(130, y + 15, "(differs)", "note");
    for (size_t b = 0; table.is_array() && b < table.size(); ++b) {
      const bool diff = at(other_table, b) != table[b];
      body += svg_cell(x0 + int(b) * (kCell + 4), y, kCell, int_or_dash(table[b]), diff,
                       "table entry " + num(int64_t(b)) + ": block " + int_or_dash(table[b]));
    }
    if (table.is_array()) width = std::max(width, x0 + int(table.size()) * (kCell + 4) + 8);
    y += kCell + 8;
  }
  if (counts.is_array()) {
    body += svg_text(4, y + 15, "reference counts by block");
    y += kCell + 2;
    for (size_t b = 0; b < counts.size(); ++b) {
      const bool diff = at(other_counts, b) != counts[b];
      const int x = 4 + int(b) * (kCell + 4);
      body += svg_text(x + 4, y + 10, num(int64_t(b)), "axis");
      body += svg_cell(x, y + 14, kCell, int_or_dash(counts[b]), diff,
                       "block " + num(int64_t(b)) + ": " + int_or_dash(counts[b]) + " holders");
    }
    width = std::max(width, 8 + int(counts.size()) * (kCell + 4));
    y += kCell + 20;
  }
  std::string text = "<p>" + esc(who) + ": free blocks " + int_or_dash(at(mine, "free_blocks"));
  if (at(mine, "exhausted").is_array())
    text += " · steps that threw PoolExhausted: " + esc(at(mine, "exhausted").dump());
  text += "</p>\n";
  return "<h4>" + esc(who) + "</h4>\n" + svg(width, y + 4, body, who + ": block tables") + text;
}

std::string block_tables(const json& expected, const json& actual) {
  const json& seqs = sequences_of(expected);
  const bool tables = seqs.is_array() && !seqs.empty();
  return std::string("<section class=\"picture\"><h3>") +
         (tables ? "Block tables and reference counts" : "The pool's reference counts") +
         "</h3>\n"
         "<p class=\"legend\"><span class=\"key diff\"></span> differs from the other side "
         "<span class=\"key same\"></span> the same</p>\n" +
         block_side(actual, expected, "Your code") + block_side(expected, actual, "The reference") +
         "</section>\n";
}

// ---- stage 8: the prefix cache's blocks

bool has_prefix_entries(const json& expected) { return at(expected, "entries").is_array(); }

// The entries in LRU order: least recently used first, the first eviction candidate.
std::vector<json> lru_order(const json& entries) {
  std::vector<json> out;
  for (const json& e : entries)
    if (e.is_object()) out.push_back(e);
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    const json& la = at(a, "last_used");
    const json& lb = at(b, "last_used");
    if (la.is_number() && lb.is_number()) return la.get<double>() < lb.get<double>();
    return false;
  });
  return out;
}

std::string entry_key(const json& e) {
  const json& k = at(e, "key");
  return k.is_string() ? k.get<std::string>() : k.dump();
}

std::string prefix_side(const json& mine, const json& other, const std::string& who) {
  std::map<std::string, json> other_by_key;
  for (const json& e : lru_order(at(other, "entries"))) other_by_key[entry_key(e)] = e;
  const std::vector<json> order = lru_order(at(mine, "entries"));
  const std::vector<json> other_order = lru_order(at(other, "entries"));
  std::string body;
  const int w = 150, h = 58;
  for (size_t i = 0; i < order.size(); ++i) {
    const json& e = order[i];
    const auto match = other_by_key.find(entry_key(e));
    const bool diff = match == other_by_key.end() || match->second != e ||
                      i >= other_order.size() || entry_key(other_order[i]) != entry_key(e);
    const int x = 4 + int(i) * (w + 8);
    body += "<g><rect x=\"" + num(x) + "\" y=\"4\" width=\"" + num(w) + "\" height=\"" + num(h) +
            "\" class=\"" + (diff ? "diff" : "same") + "\"/>";
    body +=
        svg_text(x + 6, 20, "#" + num(int64_t(i) + 1) + " · block " + int_or_dash(at(e, "block")));
    body += svg_text(x + 6, 36, "key " + entry_key(e).substr(0, 16), "mono");
    body += svg_text(
        x + 6, 52,
        "depth " + int_or_dash(at(e, "depth")) + " · used " + int_or_dash(at(e, "last_used")));
    body += "</g>";
  }
  std::string text =
      "<p>" + esc(who) + ": " + num(int64_t(order.size())) +
      " cached blocks, least recently used first (the next to be evicted) · free blocks " +
      int_or_dash(at(mine, "free_blocks"));
  if (at(mine, "evicted").is_array()) {
    text += " · evicted, in order:";
    for (const json& k : at(mine, "evicted"))
      text += " <code>" + esc(k.is_string() ? k.get<std::string>() : k.dump()) + "</code>";
  }
  const json& requests = at(mine, "requests");
  if (requests.is_array()) {
    text += " · cached tokens per request:";
    for (const json& r : requests) text += " " + int_or_dash(at(r, "cached_tokens"));
  }
  text += "</p>\n";
  const int width = std::max(300, 8 + int(order.size()) * (w + 8));
  return "<h4>" + esc(who) + "</h4>\n" +
         (order.empty() ? "<p>no cached blocks</p>\n"
                        : svg(width, h + 8, body, who + ": prefix cache")) +
         text;
}

std::string prefix_entries(const json& expected, const json& actual) {
  return "<section class=\"picture\"><h3>The prefix cache's blocks, in LRU order</h3>\n"
         "<p class=\"legend\"><span class=\"key diff\"></span> not the same block, key, depth, "
         "last use or "
         "place in the order as the other side <span class=\"key same\"></span> the same</p>\n" +
         prefix_side(actual, expected, "Your code") +
         prefix_side(expected, actual, "The reference") + "</section>\n";
}

// ---- stage 9: the batch per step

bool has_steps(const json& expected) {
  const json& s = at(expected, "steps");
  return s.is_array() && !s.empty() &&
         (at(s[0], "decoded").is_array() || at(s[0], "prefilled").is_array());
}

// "P" prefilled, "D" decoded (both: "PD"), "" neither: request r at one step.
std::string step_mark(const json& step, int64_t r) {
  auto holds = [&](const char* key) {
    const json& list = at(step, key);
    if (!list.is_array()) return false;
    for (const json& x : list)
      if (x.is_number_integer() && x.get<int64_t>() == r) return true;
    return false;
  };
  return std::string(holds("prefilled") ? "P" : "") + (holds("decoded") ? "D" : "");
}

int64_t request_count(const json& out) {
  int64_t n = at(out, "requests").is_array() ? int64_t(at(out, "requests").size()) : 0;
  for (const json& step : at(out, "steps").is_array() ? at(out, "steps") : json::array())
    for (const char* key : {"prefilled", "decoded"})
      for (const json& x : at(step, key).is_array() ? at(step, key) : json::array())
        if (x.is_number_integer() && x.get<int64_t>() >= 0 && x.get<int64_t>() < 1000)
          n = std::max(n, x.get<int64_t>() + 1);
  return n;
}

std::string steps_side(const json& mine, const json& other, int64_t n_requests,
                       const std::string& who) {
  const json& steps = at(mine, "steps");
  const json& other_steps = at(other, "steps");
  std::string body;
  const int x0 = 70, top = 20;
  for (int64_t r = 0; r < n_requests; ++r)
    body += svg_text(x0 + int(r) * (kCell + 4) + 4, top - 6, "r" + num(r), "axis");
  body += svg_text(x0 + int(n_requests) * (kCell + 4) + 6, top - 6, "free", "axis");
  const size_t n_steps = steps.is_array() ? steps.size() : 0;
  for (size_t s = 0; s < n_steps; ++s) {
    const int y = top + int(s) * (kCell + 4);
    const json& other_step = at(other_steps, s);
    body += svg_text(4, y + 15, "step " + num(int64_t(s)));
    for (int64_t r = 0; r < n_requests; ++r) {
      const std::string mark = step_mark(steps[s], r);
      const bool diff = other_step.is_null() || step_mark(other_step, r) != mark;
      body += svg_cell(x0 + int(r) * (kCell + 4), y, kCell, mark, diff,
                       "step " + num(int64_t(s)) + ", request " + num(r) + ": " +
                           (mark.empty()  ? "not in the batch"
                            : mark == "P" ? "prefilled"
                            : mark == "D" ? "decoded"
                                          : "prefilled and decoded"));
    }
    const bool free_diff = at(steps[s], "free_blocks") != at(other_step, "free_blocks");
    body += svg_cell(x0 + int(n_requests) * (kCell + 4), y, kCell + 8,
                     int_or_dash(at(steps[s], "free_blocks")), free_diff,
                     "free blocks after step " + num(int64_t(s)));
  }
  const int width = x0 + int(n_requests + 2) * (kCell + 4) + 8;
  const int height = top + int(n_steps) * (kCell + 4) + 4;
  return "<h4>" + esc(who) + ": " + num(int64_t(n_steps)) + " steps</h4>\n" +
         svg(std::max(width, 200), height, body, who + ": the batch per step");
}

std::string batch_steps(const json& expected, const json& actual) {
  const int64_t n = std::max(request_count(expected), request_count(actual));
  return "<section class=\"picture\"><h3>The batch, step by step</h3>\n"
         "<p class=\"legend\">P prefilled at that step, D decoded in that step's batch; "
         "<span class=\"key diff\"></span> differs from the other side <span class=\"key "
         "same\"></span> the same</p>\n" +
         steps_side(actual, expected, n, "Your code") +
         steps_side(expected, actual, n, "The reference") + "</section>\n";
}

// ---- tensors: which rows differ

struct RowDiff {
  std::vector<int64_t> lead;      // the shape without its last dimension
  std::vector<std::string> axes;  // their names
  std::vector<bool> differs;      // per row, row-major
  std::string problem;            // when no rows can be compared (shapes differ, ...)
};

RowDiff row_diff(const json& expected, const json& actual) {
  RowDiff d;
  if (!is_tensor(actual)) {
    d.problem = "your output has no tensor here";
    return d;
  }
  const Tensor a = tensor_from_json(actual);
  std::optional<Digest> digest;
  std::optional<Tensor> tensor;
  if (is_digest(expected))
    digest = digest_from_json(expected);
  else
    tensor = tensor_from_json(expected);
  const std::vector<int64_t> shape = digest ? digest->shape : tensor->shape;
  d.axes = digest ? digest->axes : tensor->axes;
  if (a.shape != shape) {
    d.problem = "shape " + shape_text(a.shape) + " where the reference has " + shape_text(shape);
    return d;
  }
  std::vector<bool> match;
  if (digest) {
    match = rows_matching(*digest, a);
  } else {
    const Tensor& e = *tensor;
    const size_t row = e.shape.empty() ? 1 : size_t(std::max<int64_t>(e.shape.back(), 1));
    for (size_t start = 0; start < e.data.size(); start += row) {
      bool same = true;
      for (size_t i = start; i < start + row && i < e.data.size(); ++i)
        same = same && e.data[i] == a.data[i];
      match.push_back(same);
    }
  }
  d.lead.assign(shape.begin(), shape.empty() ? shape.end() : shape.end() - 1);
  for (bool m : match) d.differs.push_back(!m);
  if (!d.axes.empty()) d.axes.pop_back();
  while (d.axes.size() < d.lead.size()) d.axes.push_back("d" + num(int64_t(d.axes.size())));
  return d;
}

std::string coordinates_of(const RowDiff& d, int64_t row) {
  std::string out;
  for (size_t k = d.lead.size(); k-- > 0;) {
    const int64_t n = std::max<int64_t>(d.lead[k], 1);
    out = d.axes[k] + " " + num(row % n) + (out.empty() ? "" : ", " + out);
    row /= n;
  }
  return out;
}

// Rows as grids: the last two leading axes are a grid's rows and columns (head by
// position), any axis before them one grid each (a layer each); a single axis is a strip.
std::string heatmap(const std::string& path, const RowDiff& d) {
  const int64_t rows = int64_t(d.differs.size());
  int64_t n_diff = 0, first = -1;
  for (int64_t i = 0; i < rows; ++i)
    if (d.differs[size_t(i)]) {
      ++n_diff;
      if (first < 0) first = i;
    }
  std::string names;
  for (size_t k = 0; k < d.axes.size(); ++k) names += (k ? ", " : "") + d.axes[k];
  std::string out = "<div class=\"heatmap\"><h4><code>" + esc(path) + "</code>: " + num(n_diff) +
                    " of " + num(rows) + " (" + esc(names) + ") rows differ</h4>\n";
  if (first >= 0) out += "<p>the first: " + esc(coordinates_of(d, first)) + "</p>\n";
  if (rows > kMaxHeatmapRows)
    return out + "<p>too many rows to draw (" + num(rows) + ")</p></div>\n";
  const int64_t cols = d.lead.empty() ? 1 : std::max<int64_t>(d.lead.back(), 1);
  const int64_t grid_rows =
      d.lead.size() >= 2 ? std::max<int64_t>(d.lead[d.lead.size() - 2], 1) : 1;
  const int64_t grids = std::max<int64_t>(1, rows / std::max<int64_t>(1, cols * grid_rows));
  const std::string outer = d.lead.size() >= 3 ? d.axes[d.lead.size() - 3] : "";
  const std::string row_axis = d.lead.size() >= 2 ? d.axes[d.lead.size() - 2] : "";
  const std::string col_axis = d.lead.empty() ? "" : d.axes.back();
  const int label_w = 60, grid_h = int(grid_rows) * kHeat + 18;
  const int width = std::max<int>(240, label_w + int(cols) * kHeat + 8);
  const int height = int(grids) * (grid_h + 4) + 14;
  std::string body = svg_text(label_w, 10, col_axis + " →", "axis");
  for (int64_t g = 0; g < grids; ++g) {
    const int y0 = 14 + int(g) * (grid_h + 4);
    const std::string label =
        (outer.empty() ? "" : outer + " " + num(g) + " ") + (row_axis.empty() ? "" : row_axis + " ↓");
    if (!label.empty()) body += svg_text(2, y0 + 12, label, "axis");
    for (int64_t r = 0; r < grid_rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = (g * grid_rows + r) * cols + c;
        if (i >= rows) continue;
        body += "<rect x=\"" + num(label_w + int(c) * kHeat) + "\" y=\"" +
                num(y0 + 16 + int(r) * kHeat) + "\" width=\"" + num(kHeat - 1) + "\" height=\"" +
                num(kHeat - 1) + "\" class=\"" + (d.differs[size_t(i)] ? "diff" : "same") + "\"/>";
      }
  }
  return out + svg(width, height, body, path + ": rows that differ") + "</div>\n";
}

// Walks the expected output and the learner's side by side, collecting tensors.
void collect_tensors(const json& expected, const json& actual, const std::string& path, int depth,
                     std::vector<std::string>& out) {
  if (out.size() >= kMaxHeatmaps || depth > 24) return;
  if (is_tensor(expected) || is_digest(expected)) {
    try {
      const RowDiff d = row_diff(expected, actual);
      if (!d.problem.empty()) {
        out.push_back("<div class=\"heatmap\"><h4><code>" + esc(path) + "</code></h4><p>" +
                      esc(d.problem) + "</p></div>\n");
        return;
      }
      if (std::find(d.differs.begin(), d.differs.end(), true) != d.differs.end())
        out.push_back(heatmap(path, d));
    } catch (const std::exception& e) {
      out.push_back("<div class=\"heatmap\"><h4><code>" + esc(path) +
                    "</code></h4><p>not drawn: " + esc(e.what()) + "</p></div>\n");
    }
    return;
  }
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it)
      collect_tensors(it.value(), at(actual, it.key().c_str()),
                      path.empty() ? it.key() : path + "." + it.key(), depth + 1, out);
  } else if (expected.is_array()) {
    for (size_t i = 0; i < expected.size(); ++i)
      collect_tensors(expected[i], at(actual, i), path + "[" + num(int64_t(i)) + "]", depth + 1,
                      out);
  }
}

std::string tensor_pictures(const json& expected, const json& actual) {
  std::vector<std::string> maps;
  collect_tensors(expected, actual, "", 0, maps);
  if (maps.empty()) return "";
  std::string out =
      "<section class=\"picture\"><h3>Which rows differ</h3>\n"
      "<p class=\"legend\">one cell per row of the last dimension; "
      "<span class=\"key diff\"></span> differs from the reference <span class=\"key "
      "same\"></span> "
      "equal bit for bit</p>\n";
  for (const std::string& m : maps) out += m;
  return out + "</section>\n";
}

// ---- the page

std::string lines_html(const std::vector<std::string>& lines, const char* cls) {
  if (lines.empty()) return "";
  std::string out = std::string("<pre class=\"") + cls + "\">";
  for (const std::string& l : lines) out += esc(l) + "\n";
  return out + "</pre>\n";
}

std::string case_html(const CaseResult& c) {
  TextStyle plain;
  plain.color = false;
  const FailureParts parts = failure_parts(c, plain, true);
  std::string out = "<article class=\"case\"><h2>Case " + esc(c.name) + " <span class=\"status\">" +
                    esc(status_name(c.status)) + "</span></h2>\n";
  out += lines_html(parts.checks, "checks") + lines_html(parts.message, "message") +
         lines_html(parts.differences, "differences") + lines_html(parts.where, "where") +
         lines_html(parts.diagnoses, "diagnoses");
  if (c.expected_output.is_null() || c.actual_output.is_null()) {
    out += "<p>No output to draw: this case did not return one.</p>\n";
  } else {
    if (has_block_tables(c.expected_output))
      out += block_tables(c.expected_output, c.actual_output);
    if (has_prefix_entries(c.expected_output))
      out += prefix_entries(c.expected_output, c.actual_output);
    if (has_steps(c.expected_output)) out += batch_steps(c.expected_output, c.actual_output);
    out += tensor_pictures(c.expected_output, c.actual_output);
  }
  return out + "</article>\n";
}

std::string stage_html(const StageResult& r) {
  std::string out = "<section class=\"stage\"><h1>Stage " + num(r.stage->number) + " · " +
                    esc(r.stage->slug) + " · " + esc(r.stage->title) + "</h1>\n<p>" +
                    num(r.passed()) + " of " + num(int64_t(r.cases.size())) + " cases pass.</p>\n";
  const CaseResult* drawn = nullptr;
  for (const CaseResult& c : r.cases)
    if (c.status != CaseStatus::passed && !c.actual_output.is_null()) {
      drawn = &c;
      break;
    }
  if (!drawn)
    for (const CaseResult& c : r.cases)
      if (c.status != CaseStatus::passed) {
        drawn = &c;
        break;
      }
  if (!drawn) return out + "<p>Every case passes: nothing to draw.</p></section>\n";
  out += case_html(*drawn);
  std::string others;
  for (const CaseResult& c : r.cases)
    if (c.status != CaseStatus::passed && &c != drawn)
      others += "<li>" + esc(c.name) + ": " + esc(c.message) + "</li>\n";
  if (!others.empty()) out += "<h3>The other failing cases</h3><ul>\n" + others + "</ul>\n";
  return out + "</section>\n";
}

constexpr const char* kStyle = R"(
body { font: 14px/1.45 sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.3em; border-bottom: 1px solid #ccc; }
h2 { font-size: 1.1em; } h3 { font-size: 1em; margin-top: 1.2em; } h4 { font-size: .95em; margin: .6em 0 .2em; }
pre { white-space: pre-wrap; margin: .2em 0; font: 12px/1.4 monospace; }
pre.message { color: #a00; }
.status { color: #a00; font-weight: normal; }
svg { display: block; margin: .3em 0; }
svg text { font: 11px sans-serif; fill: #222; }
svg text.mono { font: 11px monospace; }
svg text.axis { fill: #666; font-size: 10px; }
svg text.note { fill: #a00; }
rect.same { fill: #d9f0d9; stroke: #6a6; }
rect.diff { fill: #f6c6c6; stroke: #c33; }
.key { display: inline-block; width: 1em; height: 1em; vertical-align: middle; border: 1px solid; }
.key.same { background: #d9f0d9; border-color: #6a6; } .key.diff { background: #f6c6c6; border-color: #c33; }
code { font: 12px monospace; }
)";

}  // namespace

std::string html_report(const std::vector<StageResult>& results) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>kvcourse: your cache, drawn</title><style>" +
      std::string(kStyle) + "</style></head><body>\n";
  for (const StageResult& r : results)
    if (r.stage) out += stage_html(r);
  if (results.empty()) out += "<p>No stage was graded.</p>\n";
  return out + "</body></html>\n";
}

std::string write_html_report(const std::filesystem::path& path,
                              const std::vector<StageResult>& results) {
  const std::string text = html_report(results);
  const std::filesystem::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) return "cannot write " + tmp.string();
    file << text;
    if (!file.flush()) return "cannot write " + tmp.string();
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) {
    std::filesystem::remove(tmp, error);
    return "cannot write " + path.string();
  }
  return "";
}

}  // namespace course
