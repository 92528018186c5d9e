// The shared scenarios (tests/scenarios/*.json, format in
// tests/scenarios/README.md) run through libacp's C ABI (include/acp.h): a
// connection made with acp_connection_from_fds on two pipes, in callback
// mode, with this program as the scripted raw peer on the other ends and as
// the host (the vocabulary's rules and programs) on the libacp side. The
// scenario's `options` are connection options: `require_auth`
// (acp_options_set_require_auth) and `unstable` (each name added to the
// option `unstable` with acp_options_add_string; a name libacp refuses
// fails the scenario).
//
//   acp_scenario_runner FILE.json...   or   acp_scenario_runner DIR
//   acp_scenario_runner --self-test    (the runner's own checks)
//
// Verdicts, one line per scenario: PASS, FAIL, XFAIL (a `known_failure`
// that failed, as expected), XPASS (a `known_failure` that passed: a
// failure), SKIP (everything that could be checked passed, but a step needs
// a host ability the C ABI lacks; the reason names it; never counted as a
// pass). One file: exit 0 (PASS, XFAIL), 1 (FAIL, XPASS) or 77 (SKIP, what
// ctest's SKIP_RETURN_CODE expects). Several: a summary line, exit 1 on any
// FAIL or XPASS. ACP_TEST_TIME_SCALE multiplies the 5 s step limit (the
// valgrind pass). SCENARIO=<text> keeps only names containing <text>.
//
// The C ABI's typed errors: the status of an acp_error gives the `kind`
// (ACP_ERR_RPC "Rpc" with code, message, data; ACP_ERR_CLOSED "Closed";
// ACP_ERR_CANCELLED, ACP_ERR_TIMEOUT, ACP_ERR_INVALID_RESULT;
// ACP_ERR_INVALID_ARGUMENT "InvalidParams"). A refusal is ACP_ERR_REFUSED
// whose error data names it ({"kind": "CapabilityNotAdvertised",
// "capability": ...}); it is written {"kind": "Refused.<kind>", ...}. Should
// a refusal ever come without that data, it is written {"kind": "Refused"},
// and a pattern expecting a typed refusal makes the verdict SKIP (never PASS).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "acp.h"

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// ---------------------------------------------------------------------------
// Limits.

int time_scale() {
  static int scale = [] {
    const char* s = std::getenv("ACP_TEST_TIME_SCALE");
    int v = s ? std::atoi(s) : 1;
    return v > 0 ? v : 1;
  }();
  return scale;
}

milliseconds step_limit() { return milliseconds(5000 * time_scale()); }
milliseconds scenario_limit() { return milliseconds(60000 * time_scale()); }

// ---------------------------------------------------------------------------
// Small helpers.

std::string short_text(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 2000) {
    s.resize(2000);
    s += "...";
  }
  return s;
}

std::string str_of(const char* p, size_t n) { return p ? std::string(p, n) : std::string(); }

acp_str as_acp(const std::string& s) { return acp_str{s.data(), s.size()}; }

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// The format, checked before anything runs (unknown keys are typos).

struct Rule {
  std::string method;
  std::optional<json> params;
  json program;  // array of operations
};

struct Step {
  std::string text;
  std::string verb;
  json obj;
};

struct Scenario {
  std::string role;
  bool require_auth = false;
  std::vector<std::string> unstable;  // the connection option `unstable`
  std::vector<Rule> rules;
  std::vector<Step> script;
  std::optional<std::string> known_failure;
};

void only_keys(const json& obj, std::initializer_list<const char*> allowed, const std::string& what) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed)
      if (it.key() == a) ok = true;
    if (!ok) throw FormatError(what + ": unknown key `" + it.key() + "`");
  }
}

const json& object_of(const json& v, const std::string& what) {
  if (!v.is_object()) throw FormatError(what + " must be a JSON object, not " + short_text(v));
  return v;
}

std::string string_of(const json& obj, const char* key, const std::string& what) {
  if (!obj.contains(key)) throw FormatError(what + ": `" + key + "` is required");
  if (!obj[key].is_string())
    throw FormatError(what + ": `" + key + "` must be a string, not " + short_text(obj[key]));
  return obj[key].get<std::string>();
}

std::string verb_of(const json& obj, const std::vector<std::string>& verbs, const std::string& what) {
  std::vector<std::string> found;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(verbs.begin(), verbs.end(), it.key()) != verbs.end()) found.push_back(it.key());
  if (found.empty()) throw FormatError(what + ": no verb in " + short_text(obj));
  if (found.size() > 1) throw FormatError(what + ": more than one verb in one object");
  return found[0];
}

void must_be_true(const json& v, const std::string& what) {
  if (v != json(true)) throw FormatError(what + ": the value must be `true`");
}

void check_op(const json& op, const std::string& what) {
  object_of(op, what);
  std::string verb =
      verb_of(op, {"respond", "error", "notify", "call", "wait_for_cancel", "wait", "emit"}, what);
  if (verb == "notify" || verb == "call") {
    if (verb == "call")
      only_keys(op, {"call", "note", "params", "as", "escape"}, what);
    else
      only_keys(op, {"notify", "note", "params", "as"}, what);
    string_of(op, verb.c_str(), what);
    if (op.contains("as")) string_of(op, "as", what);
    if (op.contains("escape")) must_be_true(op["escape"], what);
    return;
  }
  only_keys(op, {verb.c_str(), "note"}, what);
  if (verb == "error") {
    const json& e = object_of(op["error"], what);
    only_keys(e, {"code", "message", "data"}, what);
    if (!e.contains("code") || !e["code"].is_number_integer())
      throw FormatError(what + ": `error.code` must be an integer");
    string_of(e, "message", what);
  } else if (verb == "wait_for_cancel") {
    must_be_true(op[verb], what);
  } else if (verb == "wait") {
    string_of(op, "wait", what);
  }
}

Step check_step(const json& step, const std::string& what) {
  object_of(step, what);
  std::string verb = verb_of(step,
                             {"send", "expect", "expect_unordered", "expect_event",
                              "expect_events_unordered", "expect_no_frame", "expect_no_event",
                              "close", "expect_closed", "action"},
                             what);
  if (verb != "action") only_keys(step, {verb.c_str(), "note"}, what);
  const json& arg = step[verb];
  if (verb == "expect_unordered" || verb == "expect_events_unordered") {
    if (!arg.is_array() || arg.empty())
      throw FormatError(what + ": `" + verb + "` takes a non-empty array");
  } else if (verb == "expect_no_frame" || verb == "expect_no_event") {
    if (!arg.is_number_unsigned() && !(arg.is_number_integer() && arg.get<int64_t>() >= 0))
      throw FormatError(what + ": a quiet period in milliseconds, not " + short_text(arg));
  } else if (verb == "close" || verb == "expect_closed") {
    must_be_true(arg, what);
  } else if (verb == "action") {
    std::string action = string_of(step, "action", what);
    if (step.contains("as")) string_of(step, "as", what);
    if (action == "call" || action == "notify") {
      only_keys(step, {"action", "as", "note", "method", "params"}, what);
      string_of(step, "method", what);
    } else if (action == "cancel_session") {
      only_keys(step, {"action", "as", "note", "sessionId"}, what);
      string_of(step, "sessionId", what);
    } else if (action == "release") {
      only_keys(step, {"action", "as", "note", "gate"}, what);
      string_of(step, "gate", what);
    } else if (action == "close") {
      only_keys(step, {"action", "as", "note"}, what);
    } else {
      throw FormatError(what + ": unknown action \"" + action +
                        "\" (call, notify, cancel_session, release, close)");
    }
  }
  return Step{short_text(step), verb, step};
}

Scenario parse_scenario(const std::string& text) {
  json v = json::parse(text, nullptr, false);
  if (v.is_discarded()) throw FormatError("not valid JSON");
  object_of(v, "the scenario");
  only_keys(v, {"description", "role", "options", "host", "script", "known_failure"},
            "the scenario");
  string_of(v, "description", "the scenario");
  Scenario s;
  s.role = string_of(v, "role", "the scenario");
  if (s.role != "agent" && s.role != "client")
    throw FormatError("`role` must be \"agent\" or \"client\", not \"" + s.role + "\"");
  if (v.contains("options")) {
    const json& o = object_of(v["options"], "`options`");
    only_keys(o, {"require_auth", "unstable"}, "`options`");
    if (o.contains("unstable")) {
      // Feature names are the C ABI's to check (acp_options_add_string).
      const json& list = o["unstable"];
      if (!list.is_array()) throw FormatError("`options.unstable` must be an array of strings");
      for (const json& name : list) {
        if (!name.is_string()) throw FormatError("`options.unstable` must be an array of strings");
        s.unstable.push_back(name.get<std::string>());
      }
    }
    if (o.contains("require_auth")) {
      if (!o["require_auth"].is_boolean())
        throw FormatError("`options.require_auth` must be a boolean");
      s.require_auth = o["require_auth"].get<bool>();
      if (s.require_auth && s.role != "agent")
        throw FormatError("`options.require_auth` is an agent option");
    }
  }
  if (v.contains("host")) {
    const json& host = object_of(v["host"], "`host`");
    only_keys(host, {"requests"}, "`host`");
    if (!host.contains("requests") || !host["requests"].is_array())
      throw FormatError("`host.requests` must be an array");
    size_t i = 0;
    for (const json& rule : host["requests"]) {
      std::string what = "host.requests[" + std::to_string(i++) + "]";
      object_of(rule, what);
      only_keys(rule, {"method", "params", "do", "note"}, what);
      if (!rule.contains("do") || !rule["do"].is_array())
        throw FormatError(what + ": `do` must be an array of operations");
      size_t j = 0;
      for (const json& op : rule["do"]) check_op(op, what + ".do[" + std::to_string(j++) + "]");
      Rule r;
      r.method = string_of(rule, "method", what);
      if (rule.contains("params")) r.params = rule["params"];
      r.program = rule["do"];
      s.rules.push_back(std::move(r));
    }
  }
  if (!v.contains("script") || !v["script"].is_array())
    throw FormatError("`script` must be an array of steps");
  size_t i = 0;
  for (const json& step : v["script"])
    s.script.push_back(check_step(step, "script[" + std::to_string(i++) + "]"));
  if (v.contains("known_failure")) s.known_failure = string_of(v, "known_failure", "the scenario");
  return s;
}

// ---------------------------------------------------------------------------
// Patterns and templates.

struct Mismatch {
  std::string path, expected, got;
  std::string describe(const std::string& what, const json& pattern, const json& actual) const {
    return what + " does not match, at " + (path.empty() ? "(top level)" : path) + ": expected " +
           expected + ", got " + got + "\n  expected " + what + ": " + short_text(pattern) +
           "\n  got " + what + ":      " + short_text(actual);
  }
};

// What a successful match adds: captures, and the C ABI's limitations met
// on the way (kept only when the whole pattern matched).
struct Bound {
  json captures = json::object();
  std::vector<std::string> limits;
};

bool json_eq(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_integer() && b.is_number_integer()) {
      bool an = a.is_number_unsigned(), bn = b.is_number_unsigned();
      if (an == bn) return an ? a.get<uint64_t>() == b.get<uint64_t>()
                              : a.get<int64_t>() == b.get<int64_t>();
      // One unsigned (>= 0), one signed.
      const json& s = an ? b : a;
      const json& u = an ? a : b;
      return s.get<int64_t>() >= 0 && static_cast<uint64_t>(s.get<int64_t>()) == u.get<uint64_t>();
    }
    return a.get<double>() == b.get<double>();
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
      if (!json_eq(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !json_eq(it.value(), b[it.key()])) return false;
    return true;
  }
  return a == b;
}

const json* lookup(const json& bound, const json& known, const std::string& name) {
  if (bound.contains(name)) return &bound[name];
  if (known.contains(name)) return &known[name];
  return nullptr;
}

// Members of a typed refusal besides `kind` (core/src/error.rs, Refusal).
const std::set<std::string> kRefusalMembers = {"method", "capability", "sessionId", "version",
                                               "message"};

std::optional<Mismatch> match_at(const json& p, const json& a, const std::string& path,
                                 const json& known, Bound& bound) {
  if (p.is_string()) {
    const std::string& s = p.get_ref<const std::string&>();
    if (starts_with(s, "$$")) {
      if (a.is_string() && a.get<std::string>() == s.substr(1)) return std::nullopt;
      return Mismatch{path, short_text(json(s.substr(1))), short_text(a)};
    }
    if (s == "$any") return std::nullopt;
    if (s == "$absent")
      return Mismatch{path, "\"$absent\" (only valid as the value of an object member)",
                      short_text(a)};
    if (starts_with(s, "$capture:")) {
      bound.captures[s.substr(9)] = a;
      return std::nullopt;
    }
    if (starts_with(s, "$ref:")) {
      std::string name = s.substr(5);
      const json* v = lookup(bound.captures, known, name);
      if (!v) return Mismatch{path, s + " (but nothing was captured under `" + name + "`)",
                              short_text(a)};
      if (json_eq(*v, a)) return std::nullopt;
      return Mismatch{path, short_text(*v) + " (" + s + ")", short_text(a)};
    }
  }
  if (p.is_object() && p.size() == 1 && p.contains("$one_of")) {
    const json& alts = p["$one_of"];
    if (!alts.is_array()) return Mismatch{path, "`$one_of` with an array", "a pattern error"};
    std::string why;
    for (const json& alt : alts) {
      Bound trial = bound;
      auto m = match_at(alt, a, path, known, trial);
      if (!m) {
        bound = std::move(trial);
        return std::nullopt;
      }
      why += (why.empty() ? "" : ", ") + m->expected;
    }
    return Mismatch{path, "one of [" + why + "]", short_text(a)};
  }
  if (p.is_object()) {
    if (!a.is_object()) return Mismatch{path, "an object", short_text(a)};
    // A typed refusal against the C ABI's untyped one: a limitation.
    if (p.contains("kind") && p["kind"].is_string() &&
        starts_with(p["kind"].get<std::string>(), "Refused.") && a.contains("kind") &&
        a["kind"] == "Refused") {
      json wanted = json::object();
      for (auto it = p.begin(); it != p.end(); ++it)
        if (it.key() != "kind" && kRefusalMembers.count(it.key())) wanted[it.key()] = it.value();
      bound.limits.push_back(
          "at " + (path.empty() ? std::string("(top level)") : path) + " the scenario expects a " +
          p["kind"].get<std::string>() + " refusal" +
          (wanted.empty() ? std::string() : " with " + short_text(wanted)) +
          "; the C ABI reports every refusal as ACP_ERR_REFUSED with a message only (got " +
          short_text(a.value("message", json(""))) +
          "), not which refusal it is nor its members");
      for (auto it = p.begin(); it != p.end(); ++it) {
        if (it.key() == "kind" || kRefusalMembers.count(it.key())) continue;
        std::string here = path + "/" + pointer_token(it.key());
        if (!a.contains(it.key())) return Mismatch{here, short_text(it.value()), "no such member"};
        if (auto m = match_at(it.value(), a[it.key()], here, known, bound)) return m;
      }
      return std::nullopt;
    }
    for (auto it = p.begin(); it != p.end(); ++it) {
      std::string here = path + "/" + pointer_token(it.key());
      bool absent = it.value().is_string() && it.value() == "$absent";
      bool has = a.contains(it.key());
      if (absent) {
        if (has) return Mismatch{here, "no such member", short_text(a[it.key()])};
        continue;
      }
      if (!has) return Mismatch{here, short_text(it.value()), "no such member"};
      if (auto m = match_at(it.value(), a[it.key()], here, known, bound)) return m;
    }
    return std::nullopt;
  }
  if (p.is_array()) {
    if (!a.is_array()) return Mismatch{path, "an array", short_text(a)};
    if (p.size() != a.size())
      return Mismatch{path, "an array of " + std::to_string(p.size()) + " items",
                      std::to_string(a.size()) + " items: " + short_text(a)};
    for (size_t i = 0; i < p.size(); i++)
      if (auto m = match_at(p[i], a[i], path + "/" + std::to_string(i), known, bound)) return m;
    return std::nullopt;
  }
  if (json_eq(p, a)) return std::nullopt;
  return Mismatch{path, short_text(p), short_text(a)};
}

std::optional<Mismatch> matches(const json& p, const json& a, const json& known, Bound& bound) {
  return match_at(p, a, "", known, bound);
}

// Fills a template: "$ref:name" becomes the captured value, "$$x" "$x".
json fill(const json& t, const json& known) {
  if (t.is_string()) {
    const std::string& s = t.get_ref<const std::string&>();
    if (starts_with(s, "$$")) return json(s.substr(1));
    if (starts_with(s, "$ref:")) {
      std::string name = s.substr(5);
      if (!known.contains(name))
        throw std::runtime_error(s + ": nothing was captured under `" + name + "`");
      return known[name];
    }
    if (s == "$any" || s == "$absent" || starts_with(s, "$capture:"))
      throw std::runtime_error(s + " is a pattern, not a value");
    return t;
  }
  if (t.is_array()) {
    json out = json::array();
    for (const json& v : t) out.push_back(fill(v, known));
    return out;
  }
  if (t.is_object()) {
    if (t.contains("$one_of")) throw std::runtime_error("`$one_of` is a pattern, not a value");
    json out = json::object();
    for (auto it = t.begin(); it != t.end(); ++it) out[it.key()] = fill(it.value(), known);
    return out;
  }
  return t;
}

// Pairs each pattern with a distinct value (backtracking; lists are short).
bool pair_up(const std::vector<json>& patterns, size_t from, const std::vector<json>& values,
             std::vector<bool>& used, const json& known, Bound& bound) {
  if (from == patterns.size()) return true;
  for (size_t j = 0; j < values.size(); j++) {
    if (used[j]) continue;
    Bound trial = bound;
    json visible = known;
    for (auto it = bound.captures.begin(); it != bound.captures.end(); ++it)
      visible[it.key()] = it.value();
    if (matches(patterns[from], values[j], visible, trial)) continue;
    used[j] = true;
    if (pair_up(patterns, from + 1, values, used, known, trial)) {
      bound = std::move(trial);
      return true;
    }
    used[j] = false;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Typed errors from the C ABI.

json error_json(const acp_error* e) {
  const char* p = nullptr;
  size_t n = 0;
  std::string message = acp_error_message(e, &p, &n) == ACP_OK ? str_of(p, n) : "";
  switch (acp_error_status(e)) {
    case ACP_ERR_RPC: {
      json v = {{"kind", "Rpc"}, {"code", acp_error_code(e)}, {"message", message}};
      if (acp_error_data(e, &p, &n) == ACP_OK && p) {
        json d = json::parse(std::string(p, n), nullptr, false);
        v["data"] = d.is_discarded() ? json(std::string(p, n)) : d;
      }
      return v;
    }
    case ACP_ERR_CLOSED: return {{"kind", "Closed"}, {"message", message}};
    case ACP_ERR_CANCELLED: return {{"kind", "Cancelled"}, {"message", message}};
    case ACP_ERR_TIMEOUT: return {{"kind", "Timeout"}, {"message", message}};
    case ACP_ERR_INVALID_RESULT: return {{"kind", "InvalidResult"}, {"message", message}};
    case ACP_ERR_INVALID_ARGUMENT: return {{"kind", "InvalidParams"}, {"message", message}};
    case ACP_ERR_REFUSED: {
      // The data names the refusal: {"kind": "CapabilityNotAdvertised", ...}.
      json v = {{"kind", "Refused"}, {"message", message}};
      if (acp_error_data(e, &p, &n) == ACP_OK && p) {
        json d = json::parse(std::string(p, n), nullptr, false);
        if (d.is_object() && d.contains("kind") && d["kind"].is_string()) {
          v = d;
          v["kind"] = "Refused." + d["kind"].get<std::string>();
          v["message"] = message;
        }
      }
      return v;
    }
    default:
      return {{"kind", std::string("Other: ") + acp_status_str(acp_error_status(e))},
              {"message", message}};
  }
}

json error_of_status(acp_status st, acp_error* err) {
  if (err) {
    json v = error_json(err);
    acp_error_free(err);
    return v;
  }
  return {{"kind", std::string("Other: ") + acp_status_str(st)}, {"message", ""}};
}

// ---------------------------------------------------------------------------
// One scenario's run.

// A call in flight; its address is the call's call_data.
struct CallSlot {
  bool done = false;
  json outcome;
  std::string returned_as;  // a script action with `as`: emit "returned"
};

// A request from the peer being handled by a host program.
struct LiveRequest {
  acp_request* req = nullptr;
  bool cancelled = false;
};

enum class LineKind { Frame, Garbage, Eof };
struct Line {
  LineKind kind;
  json frame;
  std::string text;
};

class Run {
 public:
  explicit Run(const Scenario& s) : sc_(s) {}
  ~Run() { teardown(); }

  // The verdict: failures (empty = passed) and limitations met.
  std::string run(std::vector<std::string>& limits);

 private:
  // -- state shared with the dispatch thread and the programs, under mu_ --
  std::mutex mu_;
  std::condition_variable cv_;
  json captures_ = json::object();
  std::set<std::string> gates_;
  std::deque<json> events_;
  std::vector<std::string> problems_;
  std::vector<std::string> limits_;
  std::list<CallSlot> slots_;
  std::map<std::string, std::shared_ptr<LiveRequest>> live_;
  bool stop_ = false;
  bool closed_ = false;
  std::vector<std::thread> threads_;

  // -- the peer's side of the wire --
  std::mutex lines_mu_;
  std::condition_variable lines_cv_;
  std::deque<Line> lines_;
  std::thread reader_;
  int peer_write_ = -1;
  int peer_read_ = -1;

  const Scenario& sc_;
  acp_connection* conn_ = nullptr;
  bool torn_down_ = false;

  static void on_event(void* user, acp_event* ev) { static_cast<Run*>(user)->dispatch(ev); }
  void dispatch(acp_event* ev);
  void on_request(acp_event* ev);
  void program(const Rule* rule, std::shared_ptr<LiveRequest> live, std::string method,
               std::string id);
  void settle(const std::string& what, const json& op, const json& outcome);
  json known() {
    std::lock_guard<std::mutex> g(mu_);
    return captures_;
  }
  void keep(const Bound& b) {
    std::lock_guard<std::mutex> g(mu_);
    for (auto it = b.captures.begin(); it != b.captures.end(); ++it) captures_[it.key()] = it.value();
    for (const auto& l : b.limits) limits_.push_back(l);
  }
  void emit(json event) {
    std::lock_guard<std::mutex> g(mu_);
    events_.push_back(std::move(event));
    cv_.notify_all();
  }
  void problem(std::string what) {
    std::lock_guard<std::mutex> g(mu_);
    problems_.push_back(std::move(what));
  }
  CallSlot* new_slot(std::string returned_as) {
    std::lock_guard<std::mutex> g(mu_);
    slots_.emplace_back();
    slots_.back().returned_as = std::move(returned_as);
    return &slots_.back();
  }
  // Waits until the slot is done (true) or the scenario stops / the deadline
  // passes (false).
  bool wait_slot(CallSlot* slot, std::optional<Clock::time_point> deadline, json& outcome);

  void start();
  void read_frames();
  void teardown();

  std::optional<std::string> step(const Step& step);
  std::optional<std::string> next_line(milliseconds limit, Line& line);
  std::optional<std::string> next_frame(json& frame);
  std::optional<std::string> next_event(milliseconds limit, json& event, bool& got);
  std::optional<std::string> unordered(const std::string& what, const json& patterns,
                                       const std::vector<json>& got);
  std::optional<std::string> action(const json& step);
  std::optional<std::string> send_line(const std::string& line);
};

void Run::start() {
  // The options first: a refused one leaves no descriptor behind.
  acp_options* o = nullptr;
  if (acp_options_new(&o) != ACP_OK) throw std::runtime_error("acp_options_new failed");
  acp_options_set_event_callback(o, &Run::on_event, this);
  acp_options_set_require_auth(o, sc_.require_auth);
  acp_error* err = nullptr;
  for (const std::string& feature : sc_.unstable) {
    acp_status st = acp_options_add_string(o, ACP_STR("unstable"), as_acp(feature), &err);
    if (st != ACP_OK) {
      acp_options_free(o);
      throw std::runtime_error("options.unstable: " + short_text(error_of_status(st, err)));
    }
  }
  int to_lib[2], from_lib[2];
  if (pipe2(to_lib, O_CLOEXEC) != 0 || pipe2(from_lib, O_CLOEXEC) != 0) {
    acp_options_free(o);
    throw std::runtime_error("pipe2 failed");
  }
  peer_write_ = to_lib[1];
  peer_read_ = from_lib[0];
  // The peer's writes are bounded by the step limit: non-blocking + poll.
  fcntl(peer_write_, F_SETFL, fcntl(peer_write_, F_GETFL) | O_NONBLOCK);
  acp_status st = acp_connection_from_fds(
      o, sc_.role == "agent" ? ACP_ROLE_AGENT : ACP_ROLE_CLIENT, to_lib[0], from_lib[1], &conn_, &err);
  acp_options_free(o);
  if (st != ACP_OK) {
    json e = error_of_status(st, err);
    throw std::runtime_error("acp_connection_from_fds: " + short_text(e));
  }
  reader_ = std::thread([this] { read_frames(); });
}

void Run::read_frames() {
  std::string buf;
  char chunk[65536];
  for (;;) {
    ssize_t n = read(peer_read_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string text = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      while (!text.empty() && (text.back() == '\r')) text.pop_back();
      json v = json::parse(text, nullptr, false);
      Line line{v.is_discarded() ? LineKind::Garbage : LineKind::Frame, v, text};
      std::lock_guard<std::mutex> g(lines_mu_);
      lines_.push_back(std::move(line));
      lines_cv_.notify_all();
    }
  }
  std::lock_guard<std::mutex> g(lines_mu_);
  lines_.push_back(Line{LineKind::Eof, nullptr, ""});
  lines_cv_.notify_all();
}

// ---- the host: events from libacp, on the dispatch thread ----

void Run::dispatch(acp_event* ev) {
  const char* p = nullptr;
  size_t n = 0;
  switch (acp_event_get_kind(ev)) {
    case ACP_EVENT_REQUEST:
      on_request(ev);
      break;
    case ACP_EVENT_NOTIFICATION: {
      acp_event_method(ev, &p, &n);
      std::string method = str_of(p, n);
      json params = nullptr;
      if (acp_event_params(ev, &p, &n) == ACP_OK && p) {
        params = json::parse(std::string(p, n), nullptr, false);
        if (params.is_discarded()) params = nullptr;
      }
      emit(json{{"event", "notification"}, {"method", method}, {"params", params}});
      break;
    }
    case ACP_EVENT_RESULT: {
      auto* slot = static_cast<CallSlot*>(acp_event_call_data(ev));
      json outcome;
      if (acp_event_result_status(ev) == ACP_OK && acp_event_result(ev, &p, &n) == ACP_OK && p) {
        json r = json::parse(std::string(p, n), nullptr, false);
        outcome = {{"result", r.is_discarded() ? json(nullptr) : r}};
      } else {
        outcome = {{"error", error_json(acp_event_error(ev))}};
      }
      std::lock_guard<std::mutex> g(mu_);
      if (slot) {
        slot->done = true;
        slot->outcome = outcome;
        if (!slot->returned_as.empty()) {
          json e = outcome;
          e["event"] = "returned";
          e["as"] = slot->returned_as;
          events_.push_back(std::move(e));
        }
      }
      cv_.notify_all();
      break;
    }
    case ACP_EVENT_REQUEST_CANCELLED: {
      acp_event_request_id(ev, &p, &n);
      std::lock_guard<std::mutex> g(mu_);
      auto it = live_.find(str_of(p, n));
      if (it != live_.end()) it->second->cancelled = true;
      cv_.notify_all();
      break;
    }
    case ACP_EVENT_CLOSED: {
      std::lock_guard<std::mutex> g(mu_);
      closed_ = true;
      cv_.notify_all();
      break;
    }
    default:
      break;
  }
  acp_event_free(ev);
}

void Run::on_request(acp_event* ev) {
  const char* p = nullptr;
  size_t n = 0;
  acp_event_method(ev, &p, &n);
  std::string method = str_of(p, n);
  acp_event_request_id(ev, &p, &n);
  std::string id = str_of(p, n);
  json params = nullptr;  // absent params match as null
  if (acp_event_params(ev, &p, &n) == ACP_OK && p) {
    params = json::parse(std::string(p, n), nullptr, false);
    if (params.is_discarded()) params = nullptr;
  }
  acp_request* req = nullptr;
  if (acp_event_take_request(ev, &req) != ACP_OK) {
    problem("could not take the request " + method);
    return;
  }
  json k = known();
  const Rule* chosen = nullptr;
  Bound bound;
  for (const Rule& rule : sc_.rules) {
    if (rule.method != method) continue;
    Bound trial;
    if (rule.params && matches(*rule.params, params, k, trial)) continue;
    chosen = &rule;
    bound = std::move(trial);
    break;
  }
  if (!chosen) {
    // What the engine's default handler answers (RpcError::method_not_found).
    std::string data = json{{"method", method}}.dump();
    acp_request_respond_error(req, -32601, ACP_STR("Method not found"), acp_str{data.data(), data.size()},
                              nullptr);
    acp_request_free(req);
    return;
  }
  keep(bound);
  auto live = std::make_shared<LiveRequest>();
  live->req = req;
  std::lock_guard<std::mutex> g(mu_);
  live_[id] = live;
  threads_.emplace_back([this, chosen, live, method, id] { program(chosen, live, method, id); });
}

bool Run::wait_slot(CallSlot* slot, std::optional<Clock::time_point> deadline, json& outcome) {
  std::unique_lock<std::mutex> lk(mu_);
  auto ready = [&] { return slot->done || stop_; };
  if (deadline) {
    if (!cv_.wait_until(lk, *deadline, ready)) return false;
  } else {
    cv_.wait(lk, ready);
  }
  if (!slot->done) return false;
  outcome = slot->outcome;
  return true;
}

void Run::settle(const std::string& what, const json& op, const json& outcome) {
  if (op.contains("as")) {
    std::lock_guard<std::mutex> g(mu_);
    captures_[op["as"].get<std::string>()] = outcome;
  } else if (outcome.contains("error")) {
    problem(what + " failed: " + short_text(outcome["error"]));
  }
}

void Run::program(const Rule* rule, std::shared_ptr<LiveRequest> live, std::string method,
                  std::string id) {
  std::string what = "the host's `" + method + "` handler (id " + id + ")";
  acp_request* req = live->req;
  for (const json& op : rule->program) {
    try {
      if (op.contains("respond")) {
        std::string text = fill(op["respond"], known()).dump();
        // A refused answer (libacp answered already) is ignored.
        acp_request_respond(req, acp_str{text.data(), text.size()}, nullptr);
        break;
      }
      if (op.contains("error")) {
        json e = fill(op["error"], known());
        std::string message = e["message"].get<std::string>();
        std::string data = e.contains("data") ? e["data"].dump() : "";
        acp_request_respond_error(req, e["code"].get<int64_t>(), acp_str{message.data(), message.size()}, acp_str{data.empty() ? nullptr : data.data(), data.size()}, nullptr);
        break;
      }
      if (op.contains("notify") || op.contains("call")) {
        bool is_call = op.contains("call");
        std::string m = op[is_call ? "call" : "notify"].get<std::string>();
        std::string params = op.contains("params") ? fill(op["params"], known()).dump() : "";
        acp_str ps = params.empty() ? acp_str{nullptr, 0} : as_acp(params);
        acp_error* err = nullptr;
        json outcome;
        if (!is_call) {
          acp_status st = acp_connection_notify(conn_, as_acp(m), ps, &err);
          outcome = st == ACP_OK ? json{{"result", nullptr}} : json{{"error", error_of_status(st, err)}};
        } else {
          CallSlot* slot = new_slot("");
          acp_status st = acp_connection_request(conn_, as_acp(m), ps, slot, nullptr, &err);
          if (st != ACP_OK) {
            outcome = {{"error", error_of_status(st, err)}};
          } else if (!wait_slot(slot, std::nullopt, outcome)) {
            break;  // the scenario ended
          }
        }
        if (op.contains("escape") && outcome.contains("error")) {
          // The call's error escapes the handler: answered with the
          // outcome's code, message and data (acp_error_code/_message/
          // _data); another failure as Rust's From<CallError> for RpcError
          // answers it, -32603 with its text.
          if (op.contains("as")) settle(what, op, outcome);
          const json& e = outcome["error"];
          bool rpc = e.value("kind", "") == "Rpc";
          int64_t code = rpc ? e["code"].get<int64_t>() : -32603;
          std::string message = rpc ? e.value("message", "") : "Internal error";
          std::string data = rpc ? (e.contains("data") ? e["data"].dump() : "")
                                 : json(e.value("message", "")).dump();
          acp_request_respond_error(req, code, as_acp(message),
                                    data.empty() ? acp_str{nullptr, 0} : as_acp(data), nullptr);
          break;
        }
        settle(what + ": " + (is_call ? "call " : "notify ") + m, op, outcome);
        continue;
      }
      if (op.contains("wait_for_cancel")) {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return live->cancelled || stop_; });
        if (!live->cancelled) break;
        continue;
      }
      if (op.contains("wait")) {
        std::string gate = op["wait"].get<std::string>();
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return gates_.count(gate) > 0 || stop_; });
        if (!gates_.count(gate)) break;
        continue;
      }
      if (op.contains("emit")) {
        emit(json{{"event", "emit"}, {"value", fill(op["emit"], known())}});
        continue;
      }
    } catch (const std::exception& e) {
      problem(what + ": " + e.what());
      break;
    }
  }
  // Ends without answering: freeing answers -32603 unless answered already.
  {
    std::lock_guard<std::mutex> g(mu_);
    live_.erase(id);
  }
  acp_request_free(req);
}

// ---- the script ----

std::optional<std::string> Run::next_line(milliseconds limit, Line& line) {
  std::unique_lock<std::mutex> lk(lines_mu_);
  if (!lines_cv_.wait_for(lk, limit, [&] { return !lines_.empty(); })) return std::string("timeout");
  line = lines_.front();
  if (line.kind != LineKind::Eof) lines_.pop_front();  // EOF stays
  return std::nullopt;
}

std::optional<std::string> Run::next_frame(json& frame) {
  Line line;
  if (next_line(step_limit(), line))
    return "no frame within " + std::to_string(step_limit().count() / 1000) + " s";
  if (line.kind == LineKind::Eof) return std::string("got end of stream instead of a frame");
  if (line.kind == LineKind::Garbage) return "got a line that is not JSON: " + json(line.text).dump();
  frame = line.frame;
  return std::nullopt;
}

std::optional<std::string> Run::next_event(milliseconds limit, json& event, bool& got) {
  std::unique_lock<std::mutex> lk(mu_);
  got = cv_.wait_for(lk, limit, [&] { return !events_.empty(); });
  if (got) {
    event = events_.front();
    events_.pop_front();
  }
  return std::nullopt;
}

std::optional<std::string> Run::unordered(const std::string& what, const json& patterns,
                                          const std::vector<json>& got) {
  json k = known();
  std::vector<json> pats(patterns.begin(), patterns.end());
  std::vector<bool> used(got.size(), false);
  Bound bound;
  if (pair_up(pats, 0, got, used, k, bound)) {
    keep(bound);
    return std::nullopt;
  }
  std::string report = "the " + what + "s do not match the patterns in any order";
  for (size_t i = 0; i < got.size(); i++)
    report += "\n  got " + what + " " + std::to_string(i) + ": " + short_text(got[i]);
  for (size_t i = 0; i < pats.size(); i++) {
    std::string fits;
    for (size_t j = 0; j < got.size(); j++) {
      Bound b;
      if (!matches(pats[i], got[j], k, b)) fits += (fits.empty() ? "" : ", ") + std::to_string(j);
    }
    report += "\n  pattern " + std::to_string(i) + ": " + short_text(pats[i]) + " matches " + what +
              "s [" + fits + "]";
    if (fits.empty()) {
      for (size_t j = 0; j < got.size(); j++) {
        Bound b;
        if (auto m = matches(pats[i], got[j], k, b))
          report += "\n    vs " + what + " " + std::to_string(j) + ": at " +
                    (m->path.empty() ? "(top level)" : m->path) + ": expected " + m->expected +
                    ", got " + m->got;
      }
    }
  }
  return report;
}

std::optional<std::string> Run::send_line(const std::string& line) {
  if (peer_write_ < 0) return std::string("the peer already closed its write side");
  auto deadline = Clock::now() + step_limit();
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = write(peer_write_, line.data() + off, line.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return std::string("write failed: ") + std::strerror(errno);
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::string("could not write within the step limit");
    struct pollfd pfd = {peer_write_, POLLOUT, 0};
    poll(&pfd, 1, static_cast<int>(left));
  }
  return std::nullopt;
}

std::optional<std::string> Run::step(const Step& s) {
  const json& arg = s.obj[s.verb];
  if (s.verb == "send") {
    std::string line = arg.is_string() ? arg.get<std::string>() : fill(arg, known()).dump();
    return send_line(line + "\n");
  }
  if (s.verb == "expect") {
    json frame;
    if (auto e = next_frame(frame)) return e;
    Bound b;
    if (auto m = matches(arg, frame, known(), b)) return m->describe("frame", arg, frame);
    keep(b);
    return std::nullopt;
  }
  if (s.verb == "expect_unordered") {
    std::vector<json> frames;
    for (size_t i = 0; i < arg.size(); i++) {
      json frame;
      if (auto e = next_frame(frame))
        return "after " + std::to_string(frames.size()) + " of " + std::to_string(arg.size()) +
               " frames: " + *e;
      frames.push_back(frame);
    }
    return unordered("frame", arg, frames);
  }
  if (s.verb == "expect_event" || s.verb == "expect_events_unordered") {
    bool one = s.verb == "expect_event";
    size_t count = one ? 1 : arg.size();
    std::vector<json> events;
    for (size_t i = 0; i < count; i++) {
      json ev;
      bool got = false;
      next_event(step_limit(), ev, got);
      if (!got) {
        std::string e = "no host event within " + std::to_string(step_limit().count() / 1000) + " s";
        if (one) return e;
        return "after " + std::to_string(events.size()) + " of " + std::to_string(count) +
               " events: " + e;
      }
      events.push_back(ev);
    }
    if (!one) return unordered("event", arg, events);
    Bound b;
    if (auto m = matches(arg, events[0], known(), b)) return m->describe("event", arg, events[0]);
    keep(b);
    return std::nullopt;
  }
  if (s.verb == "expect_no_frame") {
    Line line;
    if (next_line(milliseconds(arg.get<int64_t>()), line)) return std::nullopt;
    if (line.kind == LineKind::Eof) return std::string("got end of stream: libacp closed the connection");
    if (line.kind == LineKind::Garbage)
      return "got an unexpected line that is not JSON: " + json(line.text).dump();
    return "got an unexpected frame: " + short_text(line.frame);
  }
  if (s.verb == "expect_no_event") {
    json ev;
    bool got = false;
    next_event(milliseconds(arg.get<int64_t>()), ev, got);
    if (got) return "got an unexpected host event: " + short_text(ev);
    return std::nullopt;
  }
  if (s.verb == "close") {
    if (peer_write_ >= 0) {
      close(peer_write_);
      peer_write_ = -1;
    }
    return std::nullopt;
  }
  if (s.verb == "expect_closed") {
    Line line;
    if (next_line(step_limit(), line))
      return "the connection was still open after " + std::to_string(step_limit().count() / 1000) + " s";
    if (line.kind == LineKind::Eof) return std::nullopt;
    if (line.kind == LineKind::Garbage) return "expected end of stream, got a line: " + json(line.text).dump();
    return "expected end of stream, got a frame: " + short_text(line.frame);
  }
  return action(s.obj);
}

std::optional<std::string> Run::action(const json& step) {
  std::string kind = step["action"].get<std::string>();
  std::string as = step.contains("as") ? step["as"].get<std::string>() : "";
  json k = known();
  if (kind == "release") {
    std::lock_guard<std::mutex> g(mu_);
    gates_.insert(step["gate"].get<std::string>());
    cv_.notify_all();
    if (!as.empty()) events_.push_back({{"result", nullptr}, {"event", "returned"}, {"as", as}});
    return std::nullopt;
  }
  if (kind == "call") {
    std::string method = step["method"].get<std::string>();
    std::string params = step.contains("params") ? fill(step["params"], k).dump() : "";
    CallSlot* slot = new_slot(as);
    acp_error* err = nullptr;
    acp_status st = acp_connection_request(conn_, as_acp(method),
                                           params.empty() ? acp_str{nullptr, 0} : as_acp(params),
                                           slot, nullptr, &err);
    if (st != ACP_OK) {
      json outcome = {{"error", error_of_status(st, err)}};
      if (as.empty()) return "failed: " + short_text(outcome["error"]);
      json e = outcome;
      e["event"] = "returned";
      e["as"] = as;
      emit(e);
      return std::nullopt;
    }
    if (!as.empty()) return std::nullopt;  // "returned" comes with the result event
    json outcome;
    if (!wait_slot(slot, Clock::now() + step_limit(), outcome))
      return "did not complete within " + std::to_string(step_limit().count() / 1000) + " s";
    if (outcome.contains("error")) return "failed: " + short_text(outcome["error"]);
    return std::nullopt;
  }
  // notify, cancel_session, close: blocking calls, run on a thread of ours.
  std::function<json()> work;
  if (kind == "notify") {
    std::string method = step["method"].get<std::string>();
    std::string params = step.contains("params") ? fill(step["params"], k).dump() : "";
    work = [this, method, params] {
      acp_error* err = nullptr;
      acp_status st = acp_connection_notify(conn_, as_acp(method),
                                            params.empty() ? acp_str{nullptr, 0} : as_acp(params), &err);
      return st == ACP_OK ? json{{"result", nullptr}} : json{{"error", error_of_status(st, err)}};
    };
  } else if (kind == "cancel_session") {
    json id = fill(step["sessionId"], k);
    if (!id.is_string()) return std::string("`sessionId` must be a string");
    std::string sid = id.get<std::string>();
    work = [this, sid] {
      acp_error* err = nullptr;
      acp_status st = acp_connection_cancel_session(conn_, as_acp(sid), &err);
      return st == ACP_OK ? json{{"result", nullptr}} : json{{"error", error_of_status(st, err)}};
    };
  } else {  // close
    work = [this] {
      acp_status st = acp_connection_close(conn_);
      return st == ACP_OK ? json{{"result", nullptr}} : json{{"error", error_of_status(st, nullptr)}};
    };
  }
  auto done = std::make_shared<std::pair<bool, json>>(false, nullptr);
  {
    std::lock_guard<std::mutex> g(mu_);
    threads_.emplace_back([this, work, done, as] {
      json outcome = work();
      std::lock_guard<std::mutex> g2(mu_);
      done->first = true;
      done->second = outcome;
      if (!as.empty()) {
        json e = outcome;
        e["event"] = "returned";
        e["as"] = as;
        events_.push_back(std::move(e));
      }
      cv_.notify_all();
    });
  }
  if (!as.empty()) return std::nullopt;
  std::unique_lock<std::mutex> lk(mu_);
  if (!cv_.wait_for(lk, step_limit(), [&] { return done->first; }))
    return "did not complete within " + std::to_string(step_limit().count() / 1000) + " s";
  if (done->second.contains("error")) return "failed: " + short_text(done->second["error"]);
  return std::nullopt;
}

std::string Run::run(std::vector<std::string>& limits) {
  start();
  auto started = Clock::now();
  std::string failure;
  for (size_t i = 0; i < sc_.script.size(); i++) {
    const Step& s = sc_.script[i];
    std::optional<std::string> result;
    if (Clock::now() - started > scenario_limit()) {
      result = "the scenario took over " + std::to_string(scenario_limit().count() / 1000) + " s";
    } else {
      try {
        result = step(s);
      } catch (const std::exception& e) {
        result = e.what();
      }
    }
    std::vector<std::string> details;
    if (result) details.push_back(*result);
    {
      std::lock_guard<std::mutex> g(mu_);
      for (auto& p : problems_) details.push_back(p);
      problems_.clear();
    }
    if (!details.empty()) {
      failure = "step " + std::to_string(i + 1) + " " + s.text;
      for (auto& d : details) {
        std::string indented;
        for (char c : d) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
        failure += "\n    " + indented;
      }
      break;
    }
  }
  if (failure.empty()) {
    std::lock_guard<std::mutex> g(mu_);
    if (!problems_.empty()) {
      failure = "after the last step";
      for (auto& p : problems_) failure += "\n    " + p;
    }
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    limits = limits_;
  }
  teardown();
  return failure;
}

void Run::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (conn_) acp_connection_close(conn_);  // pending calls end CLOSED
  for (;;) {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> g(mu_);
      threads.swap(threads_);
    }
    if (threads.empty()) break;
    for (auto& t : threads) t.join();
  }
  if (conn_) {
    acp_connection_free(conn_);  // waits for the dispatch thread
    conn_ = nullptr;
  }
  if (peer_write_ >= 0) close(peer_write_);
  peer_write_ = -1;
  if (reader_.joinable()) reader_.join();
  if (peer_read_ >= 0) close(peer_read_);
  peer_read_ = -1;
}

// ---------------------------------------------------------------------------
// Files and verdicts.

enum class Verdict { Pass, Fail, XFail, XPass, Skip };

Verdict run_file(const std::string& path, std::string& report) {
  std::ifstream in(path);
  if (!in) {
    report = "cannot read the file";
    return Verdict::Fail;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Scenario sc;
  try {
    sc = parse_scenario(ss.str());
  } catch (const std::exception& e) {
    report = std::string("bad scenario file: ") + e.what();
    return Verdict::Fail;
  }
  std::string failure;
  std::vector<std::string> limits;
  try {
    Run run(sc);
    failure = run.run(limits);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (sc.known_failure) {
    if (!failure.empty()) {
      report = "known failure: " + *sc.known_failure + "\n  " + failure;
      return Verdict::XFail;
    }
    if (!limits.empty()) {
      report = "marked known_failure, and could not be fully checked through the C ABI:";
      for (auto& l : limits) report += "\n  " + l;
      return Verdict::Skip;
    }
    report = "marked known_failure (" + *sc.known_failure + ") but passed (XPASS): remove the marker";
    return Verdict::XPass;
  }
  if (!failure.empty()) {
    report = failure;
    return Verdict::Fail;
  }
  if (!limits.empty()) {
    report = "every other step passed, but a host ability the C ABI lacks is needed:";
    for (auto& l : limits) report += "\n  " + l;
    return Verdict::Skip;
  }
  return Verdict::Pass;
}

std::string indent(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? std::string("\n  ") : std::string(1, c);
  return out;
}


// ---------------------------------------------------------------------------
// The runner's own checks (`--self-test`): the same as the Rust runner's.

int self_test() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("self-test FAILED: %s\n", what);
      failures++;
    }
  };
  json none = json::object();
  auto ok = [&](const char* p, const char* a) {
    Bound b;
    return !matches(json::parse(p), json::parse(a), none, b);
  };
  check(ok(R"({"a": 1})", R"({"a": 1.0, "b": 2})"), "subset, numbers by value");
  check(ok(R"({"a": "$absent"})", R"({"b": 1})"), "$absent");
  check(!ok(R"({"a": "$absent"})", R"({"a": null})"), "$absent vs null");
  check(ok(R"({"a": "$any"})", R"({"a": null})"), "$any null");
  check(!ok(R"({"a": "$any"})", R"({})"), "$any missing");
  check(!ok("[1]", "[1, 2]"), "arrays match whole");
  check(ok(R"({"$one_of": ["x", "y"]})", R"("y")"), "$one_of");
  check(!ok(R"({"$one_of": ["x", "y"]})", R"("z")"), "$one_of none");
  check(ok(R"("$$any")", R"("$any")"), "$$ literal");
  check(!ok(R"("$$any")", R"("other")"), "$$ literal mismatch");
  check(ok(R"("$/cancel_request")", R"("$/cancel_request")"), "$/ literal");
  check(ok("18446744073709551615", "18446744073709551615"), "u64");
  check(!ok("-1", "18446744073709551615"), "signed vs unsigned");

  Bound bound;
  check(!matches(json::parse(R"({"id": "$capture:id"})"), json::parse(R"({"id": 7})"), none, bound),
        "capture");
  check(bound.captures["id"] == 7, "captured 7");
  {
    Bound b;
    check(!matches(json("$ref:id"), json(7), bound.captures, b), "$ref equal");
    check(!!matches(json("$ref:id"), json(8), bound.captures, b), "$ref differs");
    check(!!matches(json("$ref:nothing"), json(8), bound.captures, b), "$ref unbound");
  }
  {
    Bound b;
    auto m = matches(json::parse(R"({"result": {"stopReason": "cancelled"}})"),
                     json::parse(R"({"id": 3, "result": {"stopReason": "end_turn"}})"), none, b);
    check(m && m->path == "/result/stopReason" && m->expected == "\"cancelled\"" &&
              m->got == "\"end_turn\"",
          "mismatch path and values");
  }
  check(fill(json::parse(R"({"id": "$ref:id", "m": "$$x", "l": ["$ref:id"]})"), bound.captures) ==
            json::parse(R"({"id": 7, "m": "$x", "l": [7]})"),
        "fill");
  bool threw = false;
  try {
    fill(json::parse(R"({"a": "$any"})"), none);
  } catch (const std::exception&) {
    threw = true;
  }
  check(threw, "$any is not a value");
  {
    std::vector<json> pats = {json::parse(R"({"id": "$capture:x"})"), json::parse(R"({"id": 1})")};
    std::vector<json> vals = {json::parse(R"({"id": 2})"), json::parse(R"({"id": 1})")};
    std::vector<bool> used(2, false);
    Bound b;
    check(pair_up(pats, 0, vals, used, none, b) && b.captures["x"] == 2, "backtracks");
  }
  {
    // A typed refusal against the C ABI's untyped one is a limitation, not
    // a pass and not a mismatch; against anything else it is a mismatch.
    Bound b;
    auto m = matches(json::parse(R"({"error": {"kind": "Refused.UnknownSession", "sessionId": "g"}})"),
                     json::parse(R"({"error": {"kind": "Refused", "message": "unknown session"}})"),
                     none, b);
    check(!m && b.limits.size() == 1, "refusal limitation recorded");
    Bound c;
    check(!!matches(json::parse(R"({"error": {"kind": "Refused.UnknownSession"}})"),
                    json::parse(R"({"error": {"kind": "Closed"}})"), none, c),
          "refusal vs Closed is a mismatch");
  }

  for (const char* bad : {
           R"({"role": "agent", "script": []})",
           R"({"description": "", "role": "editor", "script": []})",
           R"({"description": "", "role": "agent", "script": [], "extra": 1})",
           R"({"description": "", "role": "agent", "script": [{"sned": {}}]})",
           R"({"description": "", "role": "agent", "script": [{"send": {}, "expect": {}}]})",
           R"({"description": "", "role": "agent", "script": [{"action": "dance"}]})",
           R"({"description": "", "role": "agent", "script": [{"expect_no_frame": "long"}]})",
           R"({"description": "", "role": "client", "options": {"require_auth": true}, "script": []})",
           R"({"description": "", "role": "agent", "options": {"unstable": "all"}, "script": []})",
           R"({"description": "", "role": "agent", "options": {"unstable": [true]}, "script": []})",
           R"({"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"reply": 1}]}]}, "script": []})",
           R"({"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"error": {"code": "x", "message": ""}}]}]}, "script": []})",
       }) {
    bool refused = false;
    try {
      parse_scenario(bad);
    } catch (const FormatError&) {
      refused = true;
    }
    if (!refused) std::printf("accepted: %s\n", bad);
    check(refused, "a bad scenario file is refused");
  }

  // A scenario whose expectation is wrong fails, saying where and how.
  {
    Scenario sc = parse_scenario(R"({"description": "", "role": "agent",
        "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1}}]}]},
        "script": [
          {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
          {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
        ]})");
    std::vector<std::string> limits;
    std::string err = Run(sc).run(limits);
    check(starts_with(err, "step 2 ") &&
              err.find("at /result/protocolVersion: expected 2, got 1") != std::string::npos &&
              err.find(R"(got frame:      {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}})") !=
                  std::string::npos,
          "a wrong expectation fails with a precise diff");
    if (failures) std::printf("%s\n", err.c_str());
  }
  {
    Scenario sc = parse_scenario(R"({"description": "", "role": "agent",
        "script": [{"send": "garbage"}, {"expect_no_frame": 200}]})");
    std::vector<std::string> limits;
    std::string err = Run(sc).run(limits);
    check(err.find("unexpected frame") != std::string::npos && err.find("-32700") != std::string::npos,
          "a -32700 answer is a frame");
  }
  {
    // `options.unstable` reaches the connection option: a name that is no
    // feature is refused there, and the scenario fails saying so.
    Scenario sc = parse_scenario(R"({"description": "", "role": "agent",
        "options": {"unstable": ["session_forks"]}, "script": []})");
    std::vector<std::string> limits;
    std::string err;
    try {
      err = Run(sc).run(limits);
    } catch (const std::exception& e) {
      err = e.what();
    }
    check(err.find("options.unstable") != std::string::npos &&
              err.find("unstable_session_fork") != std::string::npos,
          "an unknown unstable feature fails the scenario");
    if (failures) std::printf("%s\n", err.c_str());
  }
  {
    // No rule: the host answers -32601 like the engine's default handler.
    Scenario sc = parse_scenario(R"({"description": "", "role": "agent",
        "script": [{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
                   {"expect": {"id": 1, "error": {"code": -32601, "data": {"method": "initialize"}}}}]})");
    std::vector<std::string> limits;
    check(Run(sc).run(limits).empty(), "default -32601");
  }
  std::printf("self-test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);  // the peer's pipe may close under a write
  if (argc == 2 && std::string(argv[1]) == "--self-test") return self_test();
  std::vector<std::string> files;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (DIR* d = opendir(a.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) files.push_back(a + "/" + n);
      }
      closedir(d);
    } else {
      files.push_back(a);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s FILE.json... | DIR\n", argv[0]);
    return 2;
  }
  const char* filter = std::getenv("SCENARIO");
  int passed = 0, xfail = 0, skipped = 0, failed = 0;
  Verdict last = Verdict::Pass;
  for (const auto& path : files) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    name = name.substr(0, name.size() - 5);
    if (filter && *filter && name.find(filter) == std::string::npos) continue;
    auto t0 = Clock::now();
    std::string report;
    Verdict v = run_file(path, report);
    long ms = static_cast<long>(std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count());
    last = v;
    const char* tag = "PASS ";
    switch (v) {
      case Verdict::Pass: passed++; tag = "PASS "; break;
      case Verdict::XFail: xfail++; tag = "XFAIL"; break;
      case Verdict::Skip: skipped++; tag = "SKIP "; break;
      case Verdict::Fail: failed++; tag = "FAIL "; break;
      case Verdict::XPass: failed++; tag = "XPASS"; break;
    }
    std::printf("%s %s (%ld ms)%s%s\n", tag, name.c_str(), ms, report.empty() ? "" : "\n  ",
                indent(report).c_str());
    std::fflush(stdout);
  }
  int total = passed + xfail + skipped + failed;
  if (total != 1)
    std::printf("scenarios: %d passed, %d known failures, %d skipped, %d failed\n", passed, xfail,
                skipped, failed);
  if (failed > 0) return 1;
  if (total == 1 && last == Verdict::Skip) return 77;
  return 0;
}
