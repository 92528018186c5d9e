// An ACP agent written against the C ABI only (acp_connection_serve_stdio,
// poll mode), speaking the interop prompt vocabulary of
// tests/interop/README.md: `stream N`, `permission`, `read PATH`,
// `write PATH TEXT`, `terminal CMD...`, `wait`; `session/load` replays the
// session's history. ctest runs `libacp-interop-client -- acp_c_interop_agent`,
// which prints OK when every check passed. stdout carries ACP only; logs go
// to stderr. Each prompt runs on a thread of its own: it calls the client
// (results come back through call_data), sends updates with
// acp_connection_notify and answers its request from that thread.
#include <poll.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "acp.h"

using json = nlohmann::json;

namespace {

acp_connection* g_conn = nullptr;

struct Slot {
  bool done = false;
  bool ok = false;
  json result;
  std::string error;
};

struct Live {
  acp_request* req = nullptr;
  bool cancelled = false;
};

std::mutex g_mu;
std::condition_variable g_cv;
std::map<std::string, std::vector<std::pair<bool, std::string>>> g_history;  // (user?, text)
std::map<std::string, std::shared_ptr<Live>> g_live;                          // by request id
std::vector<std::thread> g_workers;
int g_sessions = 0;

acp_str str(const std::string& s) { return acp_str{s.data(), s.size()}; }

std::string text_of(const acp_error* e) {
  const char* p = nullptr;
  size_t n = 0;
  if (e && acp_error_message(e, &p, &n) == ACP_OK && p) return std::string(p, n);
  return "(no message)";
}

json call(const std::string& method, const json& params) {
  Slot slot;
  std::string text = params.dump();
  acp_error* err = nullptr;
  acp_status st = acp_connection_request(g_conn, str(method), str(text), &slot, nullptr, &err);
  if (st != ACP_OK) {
    std::string m = text_of(err);
    acp_error_free(err);
    throw std::runtime_error(method + ": " + acp_status_str(st) + ": " + m);
  }
  std::unique_lock<std::mutex> lk(g_mu);
  g_cv.wait(lk, [&] { return slot.done; });
  if (!slot.ok) throw std::runtime_error(method + ": " + slot.error);
  return slot.result;
}

void update(const std::string& sid, const json& upd) {
  std::string text = json{{"sessionId", sid}, {"update", upd}}.dump();
  acp_error* err = nullptr;
  if (acp_connection_notify(g_conn, str("session/update"), str(text), &err) != ACP_OK) {
    std::string m = text_of(err);
    acp_error_free(err);
    throw std::runtime_error("session/update: " + m);
  }
}

void say(const std::string& sid, const std::string& text) {
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_history[sid].emplace_back(false, text);
  }
  update(sid, {{"sessionUpdate", "agent_message_chunk"},
               {"content", {{"type", "text"}, {"text", text}}}});
}

void respond(acp_request* req, const json& result) {
  std::string text = result.dump();
  acp_request_respond(req, acp_str{text.data(), text.size()}, nullptr);
}

void respond_error(acp_request* req, int64_t code, const std::string& message) {
  acp_request_respond_error(req, code, acp_str{message.data(), message.size()}, acp_str{nullptr, 0}, nullptr);
}

// Runs one prompt; returns the stop reason.
std::string run_prompt(const std::string& sid, const std::string& command, Live& live) {
  std::string verb = command.substr(0, command.find(' '));
  std::string rest = command.size() > verb.size() ? command.substr(verb.size() + 1) : "";
  if (verb == "stream") {
    int n = std::stoi(rest);
    for (int i = 0; i < n; i++) say(sid, "chunk " + std::to_string(i));
  } else if (verb == "permission") {
    update(sid, {{"sessionUpdate", "tool_call"},
                 {"toolCallId", "perm-1"},
                 {"title", "Edit file"},
                 {"kind", "edit"},
                 {"status", "pending"}});
    json answer = call("session/request_permission",
                       {{"sessionId", sid},
                        {"toolCall", {{"toolCallId", "perm-1"}}},
                        {"options",
                         {{{"optionId", "allow_once"}, {"name", "Allow"}, {"kind", "allow_once"}},
                          {{"optionId", "reject_once"}, {"name", "Reject"}, {"kind", "reject_once"}}}}});
    const json& outcome = answer.at("outcome");
    if (outcome.at("outcome") != "selected") return "cancelled";
    std::string option = outcome.at("optionId").get<std::string>();
    say(sid, "permission: " + option);
    update(sid, {{"sessionUpdate", "tool_call_update"},
                 {"toolCallId", "perm-1"},
                 {"status", option == "allow_once" ? "completed" : "failed"}});
  } else if (verb == "read") {
    json file = call("fs/read_text_file", {{"sessionId", sid}, {"path", rest}});
    say(sid, file.at("content").get<std::string>());
  } else if (verb == "write") {
    size_t sp = rest.find(' ');
    std::string path = rest.substr(0, sp);
    std::string content = sp == std::string::npos ? "" : rest.substr(sp + 1);
    call("fs/write_text_file", {{"sessionId", sid}, {"path", path}, {"content", content}});
    say(sid, "wrote");
  } else if (verb == "terminal") {
    json term = call("terminal/create",
                     {{"sessionId", sid}, {"command", "sh"}, {"args", {"-c", rest}}});
    json id = term.at("terminalId");
    call("terminal/wait_for_exit", {{"sessionId", sid}, {"terminalId", id}});
    json out = call("terminal/output", {{"sessionId", sid}, {"terminalId", id}});
    call("terminal/release", {{"sessionId", sid}, {"terminalId", id}});
    say(sid, out.at("output").get<std::string>());
  } else if (verb == "wait") {
    std::unique_lock<std::mutex> lk(g_mu);
    g_cv.wait(lk, [&] { return live.cancelled; });
    return "cancelled";
  } else {
    throw std::invalid_argument("unknown prompt \"" + command + "\"");
  }
  return "end_turn";
}

void prompt_worker(std::shared_ptr<Live> live, std::string id, json params) {
  std::string sid = params.value("sessionId", "");
  std::string command;
  for (const json& block : params.value("prompt", json::array()))
    if (block.value("type", "") == "text") {
      command = block.value("text", "");
      break;
    }
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_history[sid].emplace_back(true, command);
  }
  try {
    respond(live->req, {{"stopReason", run_prompt(sid, command, *live)}});
  } catch (const std::invalid_argument& e) {
    respond_error(live->req, -32602, e.what());
  } catch (const std::exception& e) {
    respond_error(live->req, -32603, e.what());
  }
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_live.erase(id);
  }
  acp_request_free(live->req);
}

void load_worker(acp_request* req, json params) {
  std::string sid = params.value("sessionId", "");
  std::vector<std::pair<bool, std::string>> history;
  bool known;
  {
    std::lock_guard<std::mutex> g(g_mu);
    known = g_history.count(sid) > 0;
    if (known) history = g_history[sid];
  }
  if (!known) {
    std::string data = json{{"sessionId", sid}}.dump();
    acp_request_respond_error(req, -32002, ACP_STR("Resource not found"), acp_str{data.data(), data.size()}, nullptr);
  } else {
    try {
      for (auto& [user, text] : history)
        update(sid, {{"sessionUpdate", user ? "user_message_chunk" : "agent_message_chunk"},
                     {"content", {{"type", "text"}, {"text", text}}}});
      respond(req, json::object());
    } catch (const std::exception& e) {
      respond_error(req, -32603, e.what());
    }
  }
  acp_request_free(req);
}

void on_request(acp_event* ev) {
  const char* p = nullptr;
  size_t n = 0;
  acp_event_method(ev, &p, &n);
  std::string method(p, n);
  acp_event_request_id(ev, &p, &n);
  std::string id(p, n);
  acp_request* req = nullptr;
  acp_event_take_request(ev, &req);
  acp_request_params(req, &p, &n);
  json params = json::parse(std::string(p, n), nullptr, false);
  if (method == "initialize") {
    respond(req, {{"protocolVersion", 1},
                  {"agentCapabilities",
                   {{"loadSession", true},
                    {"promptCapabilities", {{"image", true}, {"audio", false}, {"embeddedContext", true}}}}},
                  {"authMethods", json::array()},
                  {"agentInfo", {{"name", "acp-c-interop-agent"}, {"version", "0.1.0"}}}});
  } else if (method == "session/new") {
    std::lock_guard<std::mutex> g(g_mu);
    std::string sid = "c-" + std::to_string(++g_sessions);
    g_history[sid];
    respond(req, {{"sessionId", sid}});
  } else if (method == "session/load") {
    std::lock_guard<std::mutex> g(g_mu);
    g_workers.emplace_back(load_worker, req, params);
    return;
  } else if (method == "session/prompt") {
    auto live = std::make_shared<Live>();
    live->req = req;
    std::lock_guard<std::mutex> g(g_mu);
    g_live[id] = live;
    g_workers.emplace_back(prompt_worker, live, id, params);
    return;
  } else {
    std::string data = json{{"method", method}}.dump();
    acp_request_respond_error(req, -32601, ACP_STR("Method not found"), acp_str{data.data(), data.size()}, nullptr);
  }
  acp_request_free(req);
}

}  // namespace

int main() {
  acp_error* err = nullptr;
  if (acp_connection_serve_stdio(nullptr, &g_conn, &err) != ACP_OK) {
    std::fprintf(stderr, "acp-c-interop-agent: %s\n", text_of(err).c_str());
    acp_error_free(err);
    return 1;
  }
  int fd = acp_connection_wakeup_fd(g_conn);
  for (bool closed = false; !closed;) {
    acp_event* ev = nullptr;
    if (acp_connection_next_event(g_conn, &ev) != ACP_OK) {
      struct pollfd pfd = {fd, POLLIN, 0};
      poll(&pfd, 1, -1);
      continue;
    }
    const char* p = nullptr;
    size_t n = 0;
    switch (acp_event_get_kind(ev)) {
      case ACP_EVENT_REQUEST:
        on_request(ev);
        break;
      case ACP_EVENT_RESULT: {
        auto* slot = static_cast<Slot*>(acp_event_call_data(ev));
        std::lock_guard<std::mutex> g(g_mu);
        if (acp_event_result_status(ev) == ACP_OK && acp_event_result(ev, &p, &n) == ACP_OK) {
          slot->ok = true;
          slot->result = json::parse(std::string(p, n), nullptr, false);
        } else {
          slot->error = std::string(acp_status_str(acp_event_result_status(ev))) + ": " +
                        text_of(acp_event_error(ev));
        }
        slot->done = true;
        g_cv.notify_all();
        break;
      }
      case ACP_EVENT_REQUEST_CANCELLED: {
        acp_event_request_id(ev, &p, &n);
        std::lock_guard<std::mutex> g(g_mu);
        auto it = g_live.find(std::string(p, n));
        if (it != g_live.end()) it->second->cancelled = true;
        g_cv.notify_all();
        break;
      }
      case ACP_EVENT_CLOSED:
        acp_event_text(ev, &p, &n);
        std::fprintf(stderr, "acp-c-interop-agent: connection closed (%.*s)\n", (int)n, p);
        closed = true;
        break;
      default:
        break;  // notifications (session/cancel): the cancelled event does the work
    }
    acp_event_free(ev);
  }
  {
    // Wake prompts still waiting (the connection is gone) and join them.
    std::lock_guard<std::mutex> g(g_mu);
    for (auto& [id, live] : g_live) live->cancelled = true;
    g_cv.notify_all();
  }
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> g(g_mu);
    workers.swap(g_workers);
  }
  for (auto& t : workers) t.join();
  acp_connection_free(g_conn);
  return 0;
}
