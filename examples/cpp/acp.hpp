// A thin C++17 layer over libacp's C ABI (acp.h): owning smart pointers for
// every libacp object (std::unique_ptr with the matching _free function),
// an exception type built from acp_error, and string helpers. It adds no
// behaviour: every protocol rule stays in libacp. acp_protocol.h comes
// with it: the method names (ACP_METHOD_*), unstable feature names
// (ACP_FEATURE_*), capability paths and payload rule names, generated from
// libacp's tables.
#pragma once

#include <acp.h>
#include <acp_protocol.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace acp {

// Frees with the given libacp function (all of them accept NULL).
template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    Free(p);
  }
};

using Options = std::unique_ptr<acp_options, Deleter<acp_options_free>>;
using Connection = std::unique_ptr<acp_connection, Deleter<acp_connection_free>>;
using Event = std::unique_ptr<acp_event, Deleter<acp_event_free>>;
using Request = std::unique_ptr<acp_request, Deleter<acp_request_free>>;
using Call = std::unique_ptr<acp_call, Deleter<acp_call_free>>;
using String = std::unique_ptr<acp_string, Deleter<acp_string_free>>;
using ErrorPtr = std::unique_ptr<acp_error, Deleter<acp_error_free>>;

// A borrowed string argument (no copy; valid while `s` is).
inline acp_str str(std::string_view s) { return acp_str{s.data(), s.size()}; }

// A pointer + length handed out by libacp, as a view (empty for NULL).
inline std::string_view view(const char* p, size_t n) {
  return p ? std::string_view(p, n) : std::string_view();
}

inline std::string_view status_name(acp_status st) { return acp_status_str(st); }

// An error from libacp: its status, message, and for JSON-RPC errors the
// code and data (JSON text).
class Error : public std::runtime_error {
 public:
  Error(acp_status status, const std::string& message, int64_t code = 0, std::string data = {})
      : std::runtime_error(message), status_(status), code_(code), data_(std::move(data)) {}

  // From a borrowed acp_error (may be NULL: then only the status speaks).
  static Error from(acp_status status, const acp_error* err, std::string_view context = {}) {
    std::string message(context);
    if (!message.empty()) message += ": ";
    int64_t code = 0;
    std::string data;
    if (err) {
      const char* p = nullptr;
      size_t n = 0;
      if (acp_error_message(err, &p, &n) == ACP_OK) message += view(p, n);
      if (acp_error_data(err, &p, &n) == ACP_OK) data = view(p, n);
      code = acp_error_code(err);
    } else {
      message += status_name(status);
    }
    if (code != 0) message += " (" + std::to_string(code) + ")";
    return Error(status, message, code, std::move(data));
  }

  acp_status status() const noexcept { return status_; }
  int64_t code() const noexcept { return code_; }
  const std::string& data() const noexcept { return data_; }

 private:
  acp_status status_;
  int64_t code_;
  std::string data_;
};

// Runs `f(acp_error**)` and throws acp::Error unless it returns ACP_OK:
//   acp::check("spawn", [&](acp_error** e) { return acp_connection_spawn_agent(..., e); });
template <class F>
void check(std::string_view context, F&& f) {
  acp_error* raw = nullptr;
  acp_status st = f(&raw);
  ErrorPtr err(raw);
  if (st != ACP_OK) throw Error::from(st, err.get(), context);
}

// For functions without an acp_error out-param.
inline void check_status(std::string_view context, acp_status st) {
  if (st != ACP_OK) throw Error::from(st, nullptr, context);
}

// Event accessors (views borrowed from the event).
inline acp_event_kind kind(const acp_event* ev) {
  return static_cast<acp_event_kind>(acp_event_get_kind(ev));
}

template <acp_status (*Get)(const acp_event*, const char**, size_t*)>
std::string_view event_text(const acp_event* ev) {
  const char* p = nullptr;
  size_t n = 0;
  return Get(ev, &p, &n) == ACP_OK ? view(p, n) : std::string_view();
}

inline std::string_view method(const acp_event* ev) { return event_text<acp_event_method>(ev); }
inline std::string_view params(const acp_event* ev) { return event_text<acp_event_params>(ev); }
inline std::string_view result(const acp_event* ev) { return event_text<acp_event_result>(ev); }
inline std::string_view text(const acp_event* ev) { return event_text<acp_event_text>(ev); }
inline std::string_view request_id(const acp_event* ev) {
  return event_text<acp_event_request_id>(ev);
}
// ACP_EVENT_ENGINE (acp_options_set_engine_events): "payload_rule", ... and
// the details as JSON text.
inline std::string_view engine_kind(const acp_event* ev) {
  return event_text<acp_event_engine_kind>(ev);
}
inline std::string_view details(const acp_event* ev) { return event_text<acp_event_details>(ev); }

// Request accessors (views borrowed from the request).
inline std::string_view method(const acp_request* r) {
  const char* p = nullptr;
  size_t n = 0;
  return acp_request_method(r, &p, &n) == ACP_OK ? view(p, n) : std::string_view();
}
inline std::string_view params(const acp_request* r) {
  const char* p = nullptr;
  size_t n = 0;
  return acp_request_params(r, &p, &n) == ACP_OK ? view(p, n) : std::string_view();
}

// An owned acp_string as std::string.
inline std::string to_string(const String& s) {
  return std::string(view(acp_string_ptr(s.get()), acp_string_len(s.get())));
}

}  // namespace acp
