// acp-plugin-demo: an editor-plugin-style ACP client in C++17 on libacp's C
// ABI, in *poll mode*.
//
//   acp-plugin-demo [--yes|--no] [--cwd DIR] [--keep] [--quiet]
//                   [--prompt TEXT]... -- AGENT_COMMAND [ARGS...]
//
// What an editor plugin does, in miniature:
//  * spawns the agent (acp_connection_spawn_agent) with libacp's client
//    services on: the session model (the conversation, tool calls and plan
//    folded from session/update), the sandboxed fs service (fs/* answered
//    inside the session's directory) and real terminals (terminal/*);
//  * runs the connection on its own "UI" thread: one poll(2) loop over
//    libacp's wakeup fd and a self-pipe written by the SIGINT handler, the
//    way an editor adds both to its main loop; nothing in it blocks for
//    long, and every step (initialize, session/new, each prompt) is driven
//    by the ACP_EVENT_RESULT of the step before;
//  * renders the turn: agent text inline as it streams, thoughts, tool calls
//    with their status and the plan (read back from
//    acp_connection_session_snapshot), then the stop reason;
//  * answers session/request_permission by flag (--yes: an allow option,
//    --no or neither: a reject option);
//  * Ctrl-C cancels the running turn (acp_connection_cancel_session: sends
//    session/cancel, answers pending permission requests "cancelled");
//    a second Ctrl-C, or one between turns, quits.
//
// Method names come from acp_protocol.h (through acp.hpp), the constants
// libacp generates from its method table.
//
// The session runs in a new temporary directory (removed at exit unless
// --keep), or in --cwd DIR. Exit status: 0 when every prompt got a stop
// reason, 1 on an error, 130 when quit with Ctrl-C.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "acp.hpp"
#include "json.hpp"

namespace {

constexpr const char* kName = "acp-plugin-demo";
constexpr const char* kVersion = "0.1.0";
constexpr const char* kDefaultPrompt = "Write hello.txt and show me the system name";

// ---------------------------------------------------------------------------
// Signals: the handler only writes a byte to a pipe (async-signal-safe);
// the UI loop polls the pipe's read end and does the real work.

int g_signal_pipe[2] = {-1, -1};

extern "C" void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &b, 1);  // full pipe: a signal is pending anyway
  (void)ignored;
  errno = saved;
}

void install_signal_handlers() {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A write to a pipe whose reader is gone (an agent that died) must fail
  // with EPIPE, not kill the editor.
  signal(SIGPIPE, SIG_IGN);
}

// ---------------------------------------------------------------------------

enum class Permission { Allow, Reject };

struct Args {
  Permission permission = Permission::Reject;
  bool permission_given = false;
  std::vector<std::string> prompts;
  std::vector<std::string> agent;
  std::optional<std::string> cwd;
  bool keep = false;
  bool quiet = false;
};

[[noreturn]] void usage(int status) {
  (status ? std::cerr : std::cout)
      << "usage: " << kName
      << " [--yes|--no] [--cwd DIR] [--keep] [--quiet] [--prompt TEXT]... -- AGENT_COMMAND "
         "[ARGS...]\n"
         "  --yes / --no   answer permission requests allow / reject (default: reject)\n"
         "  --cwd DIR      the session's directory (default: a new temporary one)\n"
         "  --keep         keep the temporary directory\n"
         "  --quiet        do not show the agent's stderr nor libacp's engine events\n"
         "  --prompt TEXT  a prompt to send (repeatable; default: \""
      << kDefaultPrompt << "\")\n";
  std::exit(status);
}

Args parse_args(int argc, char** argv) {
  Args a;
  int i = 1;
  for (; i < argc; i++) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      i++;
      break;
    } else if (arg == "--yes" || arg == "-y") {
      a.permission = Permission::Allow;
      a.permission_given = true;
    } else if (arg == "--no" || arg == "-n") {
      a.permission = Permission::Reject;
      a.permission_given = true;
    } else if (arg == "--keep") {
      a.keep = true;
    } else if (arg == "--quiet" || arg == "-q") {
      a.quiet = true;
    } else if ((arg == "--prompt" || arg == "-p") && i + 1 < argc) {
      a.prompts.emplace_back(argv[++i]);
    } else if (arg == "--cwd" && i + 1 < argc) {
      a.cwd = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      usage(0);
    } else {
      std::cerr << kName << ": unexpected argument '" << arg << "'\n";
      usage(2);
    }
  }
  for (; i < argc; i++) a.agent.emplace_back(argv[i]);
  if (a.agent.empty()) usage(2);
  if (a.prompts.empty()) a.prompts.emplace_back(kDefaultPrompt);
  return a;
}

// ---------------------------------------------------------------------------
// Terminal output.

struct Style {
  bool on = false;
  std::string dim(std::string_view s) const { return wrap("2", s); }
  std::string bold(std::string_view s) const { return wrap("1", s); }
  std::string green(std::string_view s) const { return wrap("32", s); }
  std::string red(std::string_view s) const { return wrap("31", s); }
  std::string yellow(std::string_view s) const { return wrap("33", s); }
  std::string cyan(std::string_view s) const { return wrap("36", s); }

 private:
  std::string wrap(const char* code, std::string_view s) const {
    if (!on) return std::string(s);
    return std::string("\x1b[") + code + "m" + std::string(s) + "\x1b[0m";
  }
};

// ---------------------------------------------------------------------------
// The plugin: owns the connection; every method runs on the UI thread.

class Plugin {
 public:
  explicit Plugin(Args args) : args_(std::move(args)) { style_.on = isatty(STDOUT_FILENO); }

  // The UI thread's body. Returns the exit status.
  int run() {
    try {
      prepare_directory();
      start();
      loop();
    } catch (const std::exception& e) {  // acp::Error, json::ParseError, ...
      end_line();
      std::cerr << kName << ": " << e.what() << "\n";
      exit_status_ = 1;
    }
    // After an error the agent may still be running: shut it down (and
    // wait for that) before freeing the connection.
    if (conn_ && !closed_) acp_connection_close(conn_.get());
    conn_.reset();
    cleanup_directory();
    return exit_status_;
  }

 private:
  // call_data tags: which step a result belongs to.
  enum Step : uintptr_t { kInitialize = 1, kNewSession, kPrompt };

  Args args_;
  Style style_;
  acp::Connection conn_;
  std::string cwd_;
  bool temp_dir_ = false;
  std::string session_id_;
  size_t next_prompt_ = 0;
  bool turn_running_ = false;
  bool cancel_sent_ = false;
  bool quitting_ = false;
  bool closed_ = false;
  int exit_status_ = 0;

  // Rendering state.
  enum class Line { None, Agent, Thought, User };
  Line line_ = Line::None;  // an unfinished streamed line of this kind
  // toolCallId -> the status line and the content summary last shown.
  std::map<std::string, std::pair<std::string, std::string>> shown_tool_;
  std::string shown_plan_;

  // -- setup ----------------------------------------------------------------

  void prepare_directory() {
    namespace fs = std::filesystem;
    if (args_.cwd) {
      cwd_ = fs::canonical(*args_.cwd).string();  // absolute: ACP requires it
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "acp-plugin-demo.XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    cwd_ = fs::canonical(buf.data()).string();
    temp_dir_ = true;
  }

  void cleanup_directory() {
    if (!temp_dir_) return;
    if (args_.keep) {
      std::cout << style_.dim("(kept " + cwd_ + ")") << "\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(cwd_, ec);
  }

  void start() {
    acp_options* raw_options = nullptr;
    acp::check_status("acp_options_new", acp_options_new(&raw_options));
    acp::Options options(raw_options);
    acp::check_status("options", acp_options_set_session_model(options.get(), true));
    acp::check_status("options", acp_options_set_fs(options.get(), true));
    acp::check_status("options", acp_options_set_terminals(options.get(), true));
    acp::check_status("options", acp_options_set_stderr_events(options.get(), true));
    // What libacp reports besides messages (a file it served, a payload
    // rule it enforced, a frame it skipped), shown like stderr lines.
    acp::check_status("options", acp_options_set_engine_events(options.get(), true));
    acp::check_status("options", acp_options_set_shutdown_grace_ms(options.get(), 1000, 1000));

    std::vector<acp_str> argv;
    for (size_t i = 1; i < args_.agent.size(); i++) argv.push_back(acp::str(args_.agent[i]));
    acp_connection* raw = nullptr;
    acp::check("cannot start " + args_.agent[0], [&](acp_error** e) {
      return acp_connection_spawn_agent(options.get(), acp::str(args_.agent[0]), argv.data(),
                                        argv.size(), nullptr, 0, acp_str{nullptr, 0}, &raw, e);
    });
    conn_.reset(raw);
    status_line("agent", join(args_.agent) + " (session directory " + cwd_ + ")");

    // Advertised explicitly, as an editor would; libacp also adds what its
    // enabled services answer.
    request(ACP_METHOD_INITIALIZE,
            std::string("{\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{"
                        "\"readTextFile\":true,\"writeTextFile\":true},\"terminal\":true},"
                        "\"clientInfo\":{\"name\":\"") +
                kName + "\",\"title\":\"libacp C++ plugin demo\",\"version\":\"" + kVersion +
                "\"}}",
            kInitialize);
  }

  // -- the loop ---------------------------------------------------------------

  void loop() {
    const int wake_fd = acp_connection_wakeup_fd(conn_.get());
    if (wake_fd < 0) throw std::runtime_error("no wakeup fd (not in poll mode?)");
    while (!closed_) {
      pollfd fds[2] = {{wake_fd, POLLIN, 0}, {g_signal_pipe[0], POLLIN, 0}};
      int n = poll(fds, 2, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      if (fds[1].revents & POLLIN) on_signals();
      // At most a batch per wake-up, as a UI loop would, so that input (here:
      // Ctrl-C) is never starved by a chatty agent. The wakeup fd stays
      // readable while events wait.
      for (int i = 0; i < 64 && !closed_; i++) {
        acp_event* raw = nullptr;
        acp_status st = acp_connection_next_event(conn_.get(), &raw);
        if (st == ACP_ERR_EMPTY) break;
        acp::check_status("acp_connection_next_event", st);
        acp::Event ev(raw);
        handle(ev.get());
      }
    }
  }

  // Each signal in the order it came: a first Ctrl-C during a turn cancels
  // it, the next one (or one outside a turn) quits; SIGTERM quits.
  void on_signals() {
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(g_signal_pipe[0], buf, sizeof buf)) > 0) {
      for (ssize_t i = 0; i < n && !quitting_; i++) {
        if (buf[i] == SIGTERM) {
          end_line();
          std::cout << style_.yellow("terminated: quitting") << std::endl;
          quit(143);
        } else if (buf[i] == SIGINT && turn_running_ && !cancel_sent_) {
          end_line();
          std::cout << style_.yellow("^C: cancelling the turn (Ctrl-C again to quit)") << std::endl;
          cancel_sent_ = true;
          acp::check(ACP_METHOD_SESSION_CANCEL, [&](acp_error** e) {
            return acp_connection_cancel_session(conn_.get(), acp::str(session_id_), e);
          });
        } else if (buf[i] == SIGINT) {
          end_line();
          std::cout << style_.yellow("^C: quitting") << std::endl;
          quit(130);
        }
      }
    }
  }

  void quit(int status) {
    if (quitting_) return;
    quitting_ = true;
    if (exit_status_ == 0) exit_status_ = status;
    // Waits until the connection is closed (the agent is shut down: stdin
    // closed, then SIGTERM, then SIGKILL); the loop then drains the events
    // left, pending calls ending with ACP_ERR_CLOSED, up to ACP_EVENT_CLOSED.
    acp_connection_close(conn_.get());
  }

  void handle(acp_event* ev) {
    switch (acp::kind(ev)) {
      case ACP_EVENT_RESULT: on_result(ev); break;
      case ACP_EVENT_NOTIFICATION: on_notification(ev); break;
      case ACP_EVENT_REQUEST: on_request(ev); break;
      case ACP_EVENT_REQUEST_CANCELLED:
        status_line("agent", "cancelled its request " + std::string(acp::request_id(ev)));
        break;
      case ACP_EVENT_LOG:
        if (!args_.quiet) {
          end_line();
          std::cout.flush();
          std::cerr << style_.dim("agent stderr: " + std::string(acp::text(ev))) << "\n";
        }
        break;
      case ACP_EVENT_ENGINE:
        if (!args_.quiet) {
          end_line();
          std::cout.flush();
          std::cerr << style_.dim("libacp " + std::string(acp::engine_kind(ev)) + ": " +
                                  std::string(acp::text(ev)))
                    << "\n";
        }
        break;
      case ACP_EVENT_CLOSED:
        closed_ = true;
        if (!quitting_) {
          // The agent went away before we were done.
          end_line();
          std::cerr << kName << ": the connection closed: " << acp::text(ev) << "\n";
          if (exit_status_ == 0) exit_status_ = 1;
        }
        break;
      default:
        break;
    }
  }

  // -- outgoing calls ------------------------------------------------------

  void request(const char* method, const std::string& params, Step step) {
    acp::check(method, [&](acp_error** e) {
      return acp_connection_request(conn_.get(), acp::str(method), acp::str(params),
                                    reinterpret_cast<void*>(step), nullptr, e);
    });
  }

  void on_result(acp_event* ev) {
    auto step = static_cast<Step>(reinterpret_cast<uintptr_t>(acp_event_call_data(ev)));
    acp_status st = acp_event_result_status(ev);
    if (st != ACP_OK) {
      if (quitting_ && st == ACP_ERR_CLOSED) return;  // we are closing it
      acp::Error error = acp::Error::from(st, acp_event_error(ev), step_name(step));
      if (step != kPrompt) throw error;
      // A failed prompt ends that turn, not the plugin.
      turn_running_ = false;
      end_line();
      std::cout << style_.red(std::string("prompt failed: ") + error.what()) << std::endl;
      exit_status_ = 1;
      next_turn();
      return;
    }
    json::Value result = json::parse(acp::result(ev));
    switch (step) {
      case kInitialize: {
        const json::Value& info = result["agentInfo"];
        std::string who = info["title"].str(info["name"].str("an unnamed agent"));
        if (!info["version"].str().empty()) who += " " + info["version"].str();
        status_line("initialized", who + ", protocol version " +
                                       std::to_string(acp_connection_protocol_version(conn_.get())));
        request(ACP_METHOD_SESSION_NEW,
                "{\"cwd\":" + json::quote(cwd_) + ",\"mcpServers\":[]}", kNewSession);
        break;
      }
      case kNewSession:
        session_id_ = result["sessionId"].str();
        if (session_id_.empty()) throw std::runtime_error("session/new answered no sessionId");
        status_line("session", session_id_);
        next_turn();
        break;
      case kPrompt: {
        turn_running_ = false;
        std::string reason = result["stopReason"].str("(none)");
        end_line();
        summarize_turn();
        std::cout << style_.bold("stop reason: " + reason) << std::endl;
        next_turn();
        break;
      }
    }
  }

  static const char* step_name(Step step) {
    switch (step) {
      case kInitialize: return ACP_METHOD_INITIALIZE;
      case kNewSession: return ACP_METHOD_SESSION_NEW;
      case kPrompt: return ACP_METHOD_SESSION_PROMPT;
    }
    return "call";
  }

  void next_turn() {
    if (quitting_) return;
    if (next_prompt_ == args_.prompts.size()) {
      next_prompt_++;
      quit(0);
      return;
    }
    const std::string& text = args_.prompts[next_prompt_++];
    end_line();
    std::cout << style_.cyan("> " + text) << std::endl;
    shown_tool_.clear();
    cancel_sent_ = false;
    turn_running_ = true;
    request(ACP_METHOD_SESSION_PROMPT,
            "{\"sessionId\":" + json::quote(session_id_) +
                ",\"prompt\":[{\"type\":\"text\",\"text\":" + json::quote(text) + "}]}",
            kPrompt);
  }

  // -- requests from the agent ------------------------------------------

  // fs/* and terminal/* never get here: libacp's services answer them.
  void on_request(acp_event* ev) {
    acp_request* raw = nullptr;
    if (acp_event_take_request(ev, &raw) != ACP_OK) return;
    acp::Request req(raw);
    std::string_view method = acp::method(req.get());
    if (method != ACP_METHOD_SESSION_REQUEST_PERMISSION) {
      static const char msg[] = "Method not found";
      std::string data = "{\"method\":" + json::quote(method) + "}";
      acp_request_respond_error(req.get(), -32601, acp_str{msg, sizeof msg - 1}, acp_str{data.data(), data.size()},
                                nullptr);
      return;
    }
    json::Value params = json::parse(acp::params(req.get()));
    const json::Value& options = params["options"];
    const json::Value& tool = params["toolCall"];
    std::string title = tool["title"].str();
    if (title.empty()) title = tool_title(tool["toolCallId"].str());

    const char* wanted[2];
    if (args_.permission == Permission::Allow) {
      wanted[0] = "allow_once";
      wanted[1] = "allow_always";
    } else {
      wanted[0] = "reject_once";
      wanted[1] = "reject_always";
    }
    std::string chosen, chosen_name;
    for (const char* kind : wanted) {
      for (size_t i = 0; i < options.size() && chosen.empty(); i++) {
        if (options.at(i)["kind"].str() == kind) {
          chosen = options.at(i)["optionId"].str();
          chosen_name = options.at(i)["name"].str(chosen);
        }
      }
      if (!chosen.empty()) break;
    }
    end_line();
    std::string answer;
    if (chosen.empty()) {
      answer = "{\"outcome\":{\"outcome\":\"cancelled\"}}";
      std::cout << style_.yellow("  ? permission for \"" + title +
                                 "\": no matching option, answering cancelled")
                << std::endl;
    } else {
      answer = "{\"outcome\":{\"outcome\":\"selected\",\"optionId\":" + json::quote(chosen) + "}}";
      std::string how = args_.permission == Permission::Allow ? style_.green(chosen_name)
                                                              : style_.red(chosen_name);
      std::cout << "  ? permission for \"" << title << "\": " << how
                << (args_.permission_given ? "" : style_.dim(" (default; --yes allows)"))
                << std::endl;
    }
    acp_error* err = nullptr;
    acp_status st = acp_request_respond(req.get(), acp_str{answer.data(), answer.size()}, &err);
    acp::ErrorPtr owned(err);
    // Already answered: the turn was cancelled meanwhile (libacp answered
    // "cancelled" for us).
    if (st != ACP_OK && st != ACP_ERR_ALREADY_ANSWERED && st != ACP_ERR_CLOSED)
      throw acp::Error::from(st, owned.get(), "answering session/request_permission");
  }

  // -- rendering ------------------------------------------------------------

  void on_notification(acp_event* ev) {
    if (acp::method(ev) != ACP_METHOD_SESSION_UPDATE) return;
    json::Value params = json::parse(acp::params(ev));
    const json::Value& u = params["update"];
    std::string kind = u["sessionUpdate"].str();
    if (kind == "agent_message_chunk" || kind == "agent_thought_chunk" ||
        kind == "user_message_chunk") {
      const json::Value& content = u["content"];
      std::string text = content["type"].str() == "text"
                             ? content["text"].str()
                             : "[" + content["type"].str("content") + "]";
      Line line = kind == "agent_message_chunk"   ? Line::Agent
                  : kind == "agent_thought_chunk" ? Line::Thought
                                                  : Line::User;
      if (line_ != line) {
        end_line();
        if (line == Line::Thought) std::cout << style_.dim("(thinking) ");
        if (line == Line::User) std::cout << style_.cyan("> ");
        line_ = line;
      }
      std::cout << (line == Line::Agent ? text : line == Line::Thought ? style_.dim(text) : text);
      std::cout.flush();
      if (!text.empty() && text.back() == '\n') line_ = Line::None;
    } else if (kind == "tool_call" || kind == "tool_call_update") {
      show_tool(u["toolCallId"].str());
    } else if (kind == "plan") {
      show_plan(u["entries"]);
    } else if (kind == "current_mode_update") {
      status_line("mode", u["currentModeId"].str());
    } else if (kind == "session_info_update") {
      if (u["title"].is_string()) status_line("title", u["title"].str());
    }
    // available_commands_update, config and usage updates: kept in the
    // session model, not shown here.
  }

  // The session model's view of the session (the folded tool calls).
  json::Value snapshot() {
    acp_string* raw = nullptr;
    acp::check("session snapshot", [&](acp_error** e) {
      return acp_connection_session_snapshot(conn_.get(), acp::str(session_id_), &raw, e);
    });
    acp::String s(raw);
    return json::parse(acp::to_string(s));
  }

  static const json::Value& find_tool(const json::Value& snap, const std::string& id) {
    const json::Value& calls = snap["toolCalls"];
    for (size_t i = 0; i < calls.size(); i++)
      if (calls.at(i)["toolCallId"].str() == id) return calls.at(i);
    return json::Value::null_value();
  }

  std::string tool_title(const std::string& id) {
    if (session_id_.empty()) return id;
    std::string title = find_tool(snapshot(), id)["title"].str();
    return title.empty() ? id : title;
  }

  std::string status_mark(const std::string& status) const {
    if (status == "completed") return style_.green("done");
    if (status == "failed") return style_.red("failed");
    if (status == "cancelled") return style_.yellow("cancelled");
    if (status == "in_progress") return style_.yellow("running");
    return style_.dim(status.empty() ? "pending" : status);
  }

  // One line per tool call change, from the merged state in the session
  // model (a tool_call_update carries only what changed).
  void show_tool(const std::string& id) {
    if (session_id_.empty()) return;  // updates before session/new answered
    json::Value snap = snapshot();
    const json::Value& tc = find_tool(snap, id);
    if (tc.is_null()) return;
    std::string where;
    const json::Value& loc = tc["locations"].at(0);
    if (loc["path"].is_string()) where = " " + loc["path"].str();
    std::string line = "  [" + tc["kind"].str("other") + "] " + tc["title"].str(id) + where +
                       ": " + status_mark(tc["status"].str());
    std::string content = tool_content(tc["content"]);
    auto& [shown_line, shown_content] = shown_tool_[id];
    if (shown_line == line && shown_content == content) return;
    end_line();
    std::cout << line << std::endl;
    if (shown_content != content) std::cout << style_.dim(content);
    shown_line = line;
    shown_content = content;
  }

  // What a tool call carries, a few lines at most: text, diffs (as a line
  // count), embedded terminals (by id; libacp runs them).
  static std::string tool_content(const json::Value& content) {
    std::string out;
    for (size_t i = 0; i < content.size(); i++) {
      const json::Value& c = content.at(i);
      std::string type = c["type"].str();
      if (type == "diff") {
        std::string text = c["newText"].str();
        size_t lines = 0;
        for (char ch : text) lines += ch == '\n';
        if (!text.empty() && text.back() != '\n') lines++;
        out += "      diff " + c["path"].str() + (c["oldText"].is_string() ? "" : " (new file)") +
               ": " + std::to_string(lines) + " line(s)\n";
      } else if (type == "terminal") {
        out += "      terminal " + c["terminalId"].str() + "\n";
      } else if (type == "content" && c["content"]["type"].str() == "text") {
        std::string text = c["content"]["text"].str();
        size_t start = 0;
        for (int n = 0; n < 4 && start < text.size(); n++) {
          size_t end = text.find('\n', start);
          out += "      " + text.substr(start, end == std::string::npos ? end : end - start) + "\n";
          start = end == std::string::npos ? text.size() : end + 1;
        }
        if (start < text.size()) out += "      ...\n";
      }
    }
    return out;
  }

  void show_plan(const json::Value& entries) {
    std::string line = "  plan:";
    for (size_t i = 0; i < entries.size(); i++) {
      std::string status = entries.at(i)["status"].str();
      std::string mark = status == "completed"     ? "[x]"
                         : status == "in_progress" ? "[~]"
                                                   : "[ ]";
      line += " " + mark + " " + entries.at(i)["content"].str();
      if (i + 1 < entries.size()) line += ";";
    }
    if (line == shown_plan_) return;
    shown_plan_ = line;
    end_line();
    std::cout << style_.dim(line) << std::endl;
  }

  // After a turn: the tool calls' final state, from the session model.
  void summarize_turn() {
    if (shown_tool_.empty()) return;
    json::Value snap = snapshot();
    std::string line = "  tool calls:";
    for (const auto& entry : shown_tool_) {
      const json::Value& tc = find_tool(snap, entry.first);
      line += " " + tc["title"].str(entry.first) + " (" + tc["status"].str("pending") + ")";
    }
    std::cout << style_.dim(line) << "\n";
  }

  void end_line() {
    if (line_ != Line::None) {
      std::cout << "\n";
      line_ = Line::None;
    }
  }

  void status_line(const std::string& what, const std::string& text) {
    end_line();
    std::cout << style_.dim("[" + what + "] " + text) << std::endl;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv);
  try {
    install_signal_handlers();
  } catch (const std::exception& e) {
    std::cerr << kName << ": " << e.what() << "\n";
    return 1;
  }
  // The plugin's UI thread runs the connection; this thread (the "editor")
  // only waits for it.
  int status = 1;
  std::thread ui([&] { status = Plugin(std::move(args)).run(); });
  ui.join();
  return status;
}
