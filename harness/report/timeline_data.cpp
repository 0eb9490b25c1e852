// Compact timeline data (see report/timeline_data.h).
#include "report/timeline_data.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <unordered_map>

#include "checker/index.h"
#include "report/escape.h"

namespace locklab {
namespace {

// Distinct value texts kept for tooltips; beyond this (counter values are all distinct) the
// tooltip says the value was not embedded, which keeps a 1M-event page in tens of MB.
constexpr size_t kNotesMax = 20'000;
constexpr size_t kNoteCharsMax = 160;
constexpr size_t kMarksMax = 20'000;
constexpr size_t kMarkCharsMax = 400;
constexpr int64_t kNotEmbedded = -2;
constexpr int64_t kSafeIntegerMax = (int64_t{1} << 53) - 1;

class Json {
 public:
  Json& raw(std::string_view text) {
    out_ += text;
    return *this;
  }
  Json& number(int64_t value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out_.append(buffer, end);
    return *this;
  }
  // Every string of the page's data goes through here: its bidirectional controls are shown
  // as code points, so a name cannot reorder the text drawn around it.
  Json& string(std::string_view text) {
    out_ += nlohmann::json(bidi_visible(text))
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return *this;
  }
  Json& key(std::string_view name) {
    if (!out_.empty() && out_.back() != '{') out_ += ',';
    return string(name).raw(":");
  }
  Json& numbers(std::string_view name, const std::vector<int64_t>& values) {
    key(name).raw("[");
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) out_ += ',';
      number(values[i]);
    }
    return raw("]");
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Strings {
 public:
  int64_t id(const std::string& text) {
    auto [it, added] = ids_.emplace(text, static_cast<int64_t>(list_.size()));
    if (added) list_.push_back(text);
    return it->second;
  }
  // A value's text, or -1 when there is none, kNotEmbedded beyond the limit.
  int64_t note(const nlohmann::json& value) {
    if (value.is_null() || (value.is_object() && value.empty())) return -1;
    std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > kNoteCharsMax) text = text.substr(0, kNoteCharsMax) + "…";
    auto it = ids_.find(text);
    if (it != ids_.end()) return it->second;
    if (notes_ >= kNotesMax) return kNotEmbedded;
    ++notes_;
    return id(text);
  }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> list_;
  size_t notes_ = 0;
};

struct Context {
  const std::vector<Event>& history;
  const RunModel& model;
  Strings strings;
  int64_t token_base = 0;
  bool tokens_as_offsets = true;

  int64_t us(int64_t t_ns) const { return model.offset_ns(t_ns) / 1000; }
  int64_t row(const std::string& process) const {
    auto it = model.row_of.find(process);
    return it == model.row_of.end() ? -1 : static_cast<int64_t>(it->second);
  }
  int64_t token(const std::optional<int64_t>& value) const {
    if (!value) return -1;
    return tokens_as_offsets ? *value - token_base : -1;
  }
};

int64_t hue(const std::optional<int64_t>& token) {
  if (!token) return -1;
  // Unsigned: tokens can be near 2^61; the hue needs only a stable spread.
  return static_cast<int64_t>((static_cast<uint64_t>(*token) * 47u) % 360u);
}

void choose_token_base(Context& c, const HistoryIndex& index) {
  std::optional<int64_t> low, high;
  for (const Hold& hold : index.holds) {
    if (!hold.token) continue;
    low = std::min(low.value_or(*hold.token), *hold.token);
    high = std::max(high.value_or(*hold.token), *hold.token);
  }
  for (const Operation& op : index.operations) {
    if (!op.token) continue;
    low = std::min(low.value_or(*op.token), *op.token);
    high = std::max(high.value_or(*op.token), *op.token);
  }
  c.token_base = low.value_or(0);
  // Offsets stay exact JS numbers only when the spread is below 2^53.
  c.tokens_as_offsets =
      !low || static_cast<uint64_t>(*high) - static_cast<uint64_t>(*low) <=  // high >= low
                  static_cast<uint64_t>(kSafeIntegerMax);
}

void write_holds(Json& out, Context& c, const HistoryIndex& index) {
  std::vector<size_t> order;
  for (size_t i = 0; i < index.holds.size(); ++i) {
    if (c.row(index.holds[i].process) >= 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Hold &x = index.holds[a], &y = index.holds[b];
    return std::pair(c.row(x.process), x.start_ns) < std::pair(c.row(y.process), y.start_ns);
  });
  std::vector<int64_t> row, t0, t1, hues, tok, ev, end, lock;
  for (size_t i : order) {
    const Hold& h = index.holds[i];
    row.push_back(c.row(h.process));
    t0.push_back(c.us(h.start_ns));
    t1.push_back(c.us(h.end_ns));
    hues.push_back(hue(h.token));
    tok.push_back(c.token(h.token));
    ev.push_back(h.acquire_ok == kNoEvent ? -1 : static_cast<int64_t>(h.acquire_ok));
    end.push_back(c.strings.id(std::string(describe(h.end)) + (h.shared ? " (shared)" : "")));
    lock.push_back(c.strings.id(h.lock));
  }
  out.key("holds").raw("{");
  out.numbers("row", row).numbers("t0", t0).numbers("t1", t1).numbers("hue", hues);
  out.numbers("tok", tok).numbers("ev", ev).numbers("end", end).numbers("lock", lock).raw("}");
}

void write_ops(Json& out, Context& c, const HistoryIndex& index) {
  std::vector<size_t> order;
  for (size_t i = 0; i < index.operations.size(); ++i) {
    const Operation& op = index.operations[i];
    if (op.process != "nemesis" && op.process != "harness" && c.row(op.process) >= 0)
      order.push_back(i);
  }
  auto start = [&](const Operation& op) { return c.history[op.first()].t_ns; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Operation &x = index.operations[a], &y = index.operations[b];
    return std::pair(c.row(x.process), start(x)) < std::pair(c.row(y.process), start(y));
  });
  std::vector<int64_t> row, t0, t1, f, outcome, tok, ev, ev2, lock, note1, note2;
  for (size_t i : order) {
    const Operation& op = index.operations[i];
    const bool done = op.completion != kNoEvent;
    row.push_back(c.row(op.process));
    t0.push_back(c.us(start(op)));
    t1.push_back(done ? c.us(c.history[op.completion].t_ns) : c.us(c.model.last_ns));
    f.push_back(c.strings.id(op.f));
    outcome.push_back(done ? 1 + static_cast<int64_t>(c.history[op.completion].type) : 0);
    tok.push_back(c.token(op.token));
    ev.push_back(op.invoke == kNoEvent ? -1 : static_cast<int64_t>(op.invoke));
    ev2.push_back(done ? static_cast<int64_t>(op.completion) : -1);
    lock.push_back(c.strings.id(op.lock));
    note1.push_back(op.invoke == kNoEvent ? -1 : c.strings.note(c.history[op.invoke].value));
    note2.push_back(done ? c.strings.note(c.history[op.completion].value) : -1);
  }
  out.key("ops").raw("{");
  out.numbers("row", row).numbers("t0", t0).numbers("t1", t1).numbers("f", f);
  out.numbers("out", outcome).numbers("tok", tok).numbers("ev", ev).numbers("ev2", ev2);
  out.numbers("lock", lock).numbers("note1", note1).numbers("note2", note2).raw("}");
}

void write_marks(Json& out, Context& c) {
  out.key("marks").raw("[");
  size_t kept = 0;
  for (size_t i = 0; i < c.history.size() && kept < kMarksMax; ++i) {
    const Event& event = c.history[i];
    if (event.process != "nemesis" && event.process != "harness") continue;
    std::string text = to_json_line(event);
    if (text.size() > kMarkCharsMax) text = text.substr(0, kMarkCharsMax) + "…";
    out.raw(kept++ ? ",[" : "[").number(c.us(event.t_ns)).raw(",").number(c.row(event.process));
    out.raw(",").number(static_cast<int64_t>(i)).raw(",").string(text).raw("]");
  }
  out.raw("]");
}

void write_faults(Json& out, Context& c) {
  out.key("faults").raw("[");
  bool first = true;
  for (const ReportWindow& w : c.model.windows) {
    out.raw(first ? "{" : ",{");
    first = false;
    out.key("label").string(w.label()).key("status").string(w.status);
    out.key("win").string(w.window);
    out.key("t0").number(c.us(w.start_ns)).key("tf").number(c.us(w.in_force_ns));
    out.key("t1").number(c.us(w.end_ns)).key("rows").raw("[");
    bool first_row = true;
    for (const std::string& target : w.targets) {
      if (c.row(target) < 0) continue;
      out.raw(first_row ? "" : ",").number(c.row(target));
      first_row = false;
    }
    out.raw("]").key("errors").raw("[");
    for (size_t k = 0; k < w.errors.size(); ++k) out.raw(k ? "," : "").string(w.errors[k]);
    out.raw("]").raw("}");
  }
  out.raw("]");
}

void write_primaries(Json& out, Context& c) {
  out.key("prim").raw("[");
  for (size_t k = 0; k < c.model.primaries.size(); ++k) {
    const PrimaryObservation& p = c.model.primaries[k];
    out.raw(k ? ",[" : "[").number(c.us(p.t_ns)).raw(",").number(c.row(p.member)).raw(",");
    out.string(p.member).raw(",").string(p.source).raw(",");
    out.number(static_cast<int64_t>(p.event)).raw("]");
  }
  out.raw("]");
}

void write_violations(Json& out, Context& c, const Verdict& verdict) {
  std::vector<int64_t> evidence;
  out.key("viol").raw("[");
  bool first = true;
  for (const Violation* v : all_violations(verdict)) {
    out.raw(first ? "{" : ",{");
    first = false;
    out.key("p").string(v->property).key("msg").string(v->message).key("cause").string(v->cause);
    out.key("ev").raw("[");
    bool first_event = true;
    for (size_t e : v->events) {
      if (e >= c.history.size()) continue;  // a stale verdict: nothing to point at
      out.raw(first_event ? "" : ",").number(static_cast<int64_t>(e));
      first_event = false;
      evidence.push_back(static_cast<int64_t>(e));
    }
    out.raw("]}");
  }
  out.raw("]");
  std::sort(evidence.begin(), evidence.end());
  evidence.erase(std::unique(evidence.begin(), evidence.end()), evidence.end());
  std::vector<int64_t> t, row;
  for (int64_t e : evidence) {
    const Event& event = c.history[static_cast<size_t>(e)];
    t.push_back(c.us(event.t_ns));
    row.push_back(c.row(event.process));
  }
  out.key("evt").raw("{").numbers("i", evidence).numbers("t", t).numbers("row", row).raw("}");
}

// "</script" or "<!--" inside the data would end or confuse the <script> element it sits in;
// '<' occurs only inside JSON strings, where \u003c is the same character.
std::string escape_for_script(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch == '<') {
      out += "\\u003c";
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::vector<const Violation*> all_violations(const Verdict& verdict) {
  std::vector<const Violation*> list;
  for (const PropertyResult& result : verdict.properties) {
    for (const Violation& violation : result.violations) list.push_back(&violation);
  }
  return list;
}

std::string render_timeline_data(const std::vector<Event>& history, const Verdict& verdict,
                                 const RunModel& model) {
  const HistoryIndex index = HistoryIndex::build(history);
  Context c{history, model, {}, 0, true};
  choose_token_base(c, index);
  Json out;
  out.raw("{").key("span").number(c.us(model.last_ns));
  out.key("n").number(static_cast<int64_t>(history.size()));
  out.key("rows").raw("[");
  for (size_t r = 0; r < model.rows.size(); ++r) {
    out.raw(r ? ",[" : "[").string(model.rows[r].name).raw(",").string(model.rows[r].group);
    out.raw("]");
  }
  out.raw("]").key("tokBase").string(std::to_string(c.token_base));
  out.key("tokExact").raw(c.tokens_as_offsets ? "true" : "false");
  write_holds(out, c, index);
  write_ops(out, c, index);
  write_marks(out, c);
  write_faults(out, c);
  write_primaries(out, c);
  write_violations(out, c, verdict);
  // Strings last: the writers above add to them.
  out.key("strs").raw("[");
  const std::vector<std::string>& strings = c.strings.list();
  for (size_t k = 0; k < strings.size(); ++k) out.raw(k ? "," : "").string(strings[k]);
  out.raw("]}");
  return escape_for_script(out.take());
}

}  // namespace locklab
