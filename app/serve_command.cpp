// lcrwmd serve: the search service over HTTP/1.1 (cpp-httplib), JSON in and out
// (search_service.h has what it answers), on 127.0.0.1 unless told otherwise. Writes (a
// collection's documents) need the write token where one is given, and one is needed to write
// at all where the service listens beyond loopback. SIGTERM or SIGINT drains: requests already
// read are answered, new ones get 503 until none is left in flight; then the server stops and
// exits 0.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "app/commands.h"
#include "app/json_out.h"
#include "app/query_input.h"
#include "app/search_service.h"
#include "app/serve_page.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/error.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"

namespace lcrwmd::app {
namespace {

using nlohmann::json;

struct ServeFlags {
  std::string index, embeddings, stopwords, host = "127.0.0.1", write_token_file;
  QueryFlags engine;  // the backend and its tuning, as every command that searches takes them
  int port = 8080;
  std::size_t max_batch = 256, max_queue = 4096, max_k = 1000, max_queries = 1024;
  std::size_t max_body_kib = 1024, http_threads = 128, max_documents = 10000;
  double max_wait_ms = 2, write_wait = 30;
  bool read_only = false, no_merge = false;
};

// Who may change the collection: anyone who reaches a loopback address, unless a token is
// given; beyond loopback, only the token's holders (without one, nobody).
class WriteGuard {
 public:
  explicit WriteGuard(const ServeFlags& f) : read_only_(f.read_only), host_(f.host) {
    if (!f.write_token_file.empty()) {
      std::ifstream in(f.write_token_file);
      if (!in) throw Error("--write-token-file " + f.write_token_file + ": cannot be read");
      std::getline(in, token_);
      while (!token_.empty() && std::isspace(static_cast<unsigned char>(token_.back())))
        token_.pop_back();
      if (token_.size() < 16)
        throw Error("--write-token-file " + f.write_token_file +
                    ": its first line should be a token of 16 characters or more");
    }
    open_ = token_.empty() && is_loopback(f.host);
  }
  // Throws the RequestError that refuses a write, if it is refused.
  void check(const httplib::Request& req) const {
    if (read_only_) throw RequestError(403, "documents", "the service was started --read-only");
    if (open_) return;
    if (token_.empty())
      throw RequestError(
          403, "authorization",
          "writes over " + host_ + " need a token: restart the service with --write-token-file");
    const std::string given = req.get_header_value("Authorization");
    if (!same(given, "Bearer " + token_))
      throw RequestError(
          401, "authorization",
          given.empty() ? "a write needs the header Authorization: Bearer <token>" : "wrong token");
  }
  std::string describe() const {
    return read_only_       ? "read-only"
           : open_          ? "writes open to loopback"
           : token_.empty() ? "writes off (no token)"
                            : "writes need the token";
  }

 private:
  static bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
  }
  // Compares in time independent of where they differ.
  static bool same(const std::string& a, const std::string& b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < b.size(); ++i)
      diff |= static_cast<unsigned char>(i < a.size() ? a[i] ^ b[i] : 1);
    return diff == 0;
  }
  bool read_only_ = false, open_ = false;
  std::string token_, host_;
};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(to_bytes(body), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& field,
                const std::string& message) {
  send_json(res, status, error_json(status, field, message));
}

// Requests being answered, and whether a stop signal came.
struct Drain {
  std::atomic<int> in_flight{0};
  std::atomic<bool> draining{false};
};

// One request in flight for as long as it lives, however its answer ends: the drain waits
// for the count to reach 0, so no path may skip the decrement.
class InFlight {
 public:
  explicit InFlight(Drain& d) : d_(d) { ++d_.in_flight; }
  ~InFlight() { --d_.in_flight; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  Drain& d_;
};

// Runs a JSON endpoint: the answer or the error as JSON, the time counted.
template <typename Handler>
void answer(SearchService& service, Drain& drain, const char* endpoint, httplib::Response& res,
            Handler&& handle) {
  const auto start = std::chrono::steady_clock::now();
  const InFlight counted(drain);
  try {
    if (drain.draining) {
      res.set_header("Connection", "close");
      throw QueueFull("the service is shutting down");
    }
    send_json(res, 200, handle());
  } catch (const RequestError& e) {
    send_error(res, e.status, e.field, e.what());
  } catch (const QueueFull& e) {
    send_error(res, 503, "queue", e.what());
  } catch (const OptionError& e) {  // the library's rule, found where it runs the search
    send_error(res, 400, e.option(), e.what());
  } catch (const std::exception& e) {
    send_error(res, 500, "server", e.what());
  }
  service.record(endpoint, res.status,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// The endpoints and the methods each answers: another method on one of them is a 405. A path
// ending in '/' stands for every path under it.
constexpr struct {
  const char* path;
  const char* allow;
} kEndpoints[] = {{"/search", "POST"},       {"/explain", "POST"},
                  {"/info", "GET, HEAD"},    {"/health", "GET, HEAD"},
                  {"/metrics", "GET, HEAD"}, {"/", "GET, HEAD"},
                  {"/documents", "POST"},    {"/documents/", "GET, HEAD, DELETE"}};

bool matches(const std::string& path, std::string_view endpoint) {
  return endpoint.size() > 1 && endpoint.back() == '/'
             ? path.size() > endpoint.size() && path.starts_with(endpoint)
             : path == endpoint;
}

// Unknown paths, wrong methods, oversize or unreadable requests: a JSON error too.
void refuse(const httplib::Request& req, httplib::Response& res) {
  if (!res.body.empty()) return;
  if (res.status == 404)
    for (const auto& e : kEndpoints)
      if (matches(req.path, e.path)) {
        res.set_header("Allow", e.allow);
        send_error(res, 405, "method",
                   req.method + " does not apply to " + req.path + " (allowed: " + e.allow + ")");
        return;
      }
  switch (res.status) {
    case 404:
      return send_error(res, 404, "path", "no such endpoint: " + req.path);
    case 413:
      return send_error(res, 413, "body", "the request body is too large");
    case 411:
      return send_error(res, 411, "body", "a body needs its Content-Length");
    case 400:  // what the HTTP library refuses to read: a POST's missing body, mostly
      if (req.method == "POST")
        return send_error(res, 400, "body",
                          "empty or unreadable: expected a JSON object (with a Content-Length)");
      break;
    default:
      break;
  }
  send_error(res, res.status, res.status >= 500 ? "server" : "request",
             "the request could not be read (HTTP " + std::to_string(res.status) + ")");
}

// A POST endpoint: its body read through a content reader, which cpp-httplib holds to
// --max-body-kib (413) and to nothing else (its plain handlers cap a body labelled as a form,
// as curl -d labels JSON, at 8 KiB, compiled into Debian's library). handle(req, body) parses
// the body (parse_body) once it has admitted the request.
template <typename Handler>
void post(httplib::Server& server, const char* path, SearchService& service, Drain& drain,
          const char* endpoint, Handler handle) {
  server.Post(path, [&service, &drain, endpoint, handle](const httplib::Request& req,
                                                         httplib::Response& res,
                                                         const httplib::ContentReader& read) {
    std::string body;
    if (!read([&](const char* data, std::size_t n) {
          body.append(data, n);
          return true;
        }))
      return refuse(req, res);  // too large (413) or cut short
    answer(service, drain, endpoint, res, [&] { return handle(req, body); });
  });
}

void serve(const ServeFlags& f) {
  set_threads(f.engine.threads);
  // SIGTERM and SIGINT go to one thread that stops the server (every thread made from here
  // on inherits the mask, so none of them is interrupted).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const WriteGuard guard(f);
  const SearcherOptions so = f.engine.searcher_options();
  ServiceOptions opt;
  opt.embeddings = f.embeddings;
  opt.stopwords = f.stopwords;
  opt.merge = !f.no_merge;
  opt.write_wait_seconds = f.write_wait;
  opt.limits.max_documents = f.max_documents;
  opt.batching.max_batch = f.max_batch;
  opt.batching.max_wait = std::chrono::microseconds(static_cast<long long>(f.max_wait_ms * 1000));
  opt.batching.max_queued = f.max_queue;
  opt.limits.max_k = f.max_k;
  opt.limits.max_queries = f.max_queries;
  SearchService service(f.index, so, opt);

  httplib::Server server;
  Drain drain;
  const std::size_t workers = f.http_threads;
  server.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  server.set_payload_max_length(f.max_body_kib << 10);  // larger bodies: 413
  server.set_tcp_nodelay(true);  // an answer goes out whole at once, not after Nagle's wait
  post(server, "/search", service, drain, "search",
       [&](const httplib::Request&, const std::string& body) {
         return service.search(parse_body(body));
       });
  post(server, "/explain", service, drain, "explain",
       [&](const httplib::Request&, const std::string& body) {
         return service.explain(parse_body(body));
       });
  post(server, "/documents", service, drain, "documents",
       [&](const httplib::Request& req, const std::string& body) {
         guard.check(req);  // before the body is read as JSON
         return service.add(parse_body(body));
       });
  server.Delete(R"(/documents/(.+))", [&](const httplib::Request& req, httplib::Response& res) {
    answer(service, drain, "documents", res, [&] {
      guard.check(req);
      return service.remove(req.matches[1]);
    });
  });
  server.Get(R"(/documents/(.+))", [&](const httplib::Request& req, httplib::Response& res) {
    answer(service, drain, "documents", res, [&] { return service.document(req.matches[1]); });
  });
  server.Get("/info", [&](const httplib::Request&, httplib::Response& res) {
    answer(service, drain, "info", res, [&] { return service.info(); });
  });
  server.Get("/health", [&](const httplib::Request&, httplib::Response& res) {
    answer(service, drain, "health", res, [&] { return json{{"status", "ok"}}; });
  });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(service.metrics(), "text/plain; version=0.0.4");
  });
  server.Get("/", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(kServePage, "text/html; charset=utf-8");
    service.record("page", 200, 0);
  });
  server.set_error_handler(refuse);
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        send_error(res, 500, "server", "internal error");
      });

  // Debian's cpp-httplib listens with a backlog of 5, compiled in: a burst of connections
  // beyond it (64 clients at once) may be reset. The listening socket is noted as it is made
  // and its backlog raised once bound (listen() again on a listening socket resizes it).
  int listening = -1;
  server.set_socket_options([&listening](socket_t sock) {
    httplib::default_socket_options(sock);
    listening = sock;
  });
  const int port = f.port == 0 ? server.bind_to_any_port(f.host)
                               : (server.bind_to_port(f.host, f.port) ? f.port : -1);
  if (port < 0 || listening < 0 || ::listen(listening, SOMAXCONN) != 0)
    throw Error("cannot listen on " + f.host + ":" + std::to_string(f.port) +
                " (in use, or not an address of this machine)");
  std::thread stopper([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    if (signal == 0) return;
    drain.draining = true;
    service.close();
    while (drain.in_flight > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    server.stop();
  });
  const json info = service.info();
  std::fprintf(stderr, "lcrwmd serve: %zu documents%s, %s backend, %s, listening on http://%s:%d\n",
               info["documents"].get<std::size_t>(), service.collection() ? " (a collection)" : "",
               info["backend"].get<std::string>().c_str(),
               service.collection() ? guard.describe().c_str() : "an index file (read-only)",
               f.host.c_str(), port);
  std::fflush(stderr);
  server.listen_after_bind();
  // listen_after_bind returns once stop() was called and the accepted requests are answered.
  if (stopper.joinable()) {
    pthread_kill(stopper.native_handle(), SIGTERM);  // wakes sigwait where the server stopped
    stopper.join();                                  // on its own (a failed socket)
  }
  std::fprintf(stderr, "lcrwmd serve: stopped\n");
}

}  // namespace

void add_serve(CLI::App& app) {
  auto* c = app.add_subcommand("serve", "A search service over a resident index (HTTP, JSON)");
  auto f = std::make_shared<ServeFlags>();
  c->add_option("--index", f->index,
                "Index file or collection directory (from lcrwmd build; a collection takes "
                "documents: POST /documents, DELETE /documents/ID)")
      ->required();
  add_text_flags(c, f->embeddings, f->stopwords);
  c->add_option("--host", f->host, "Address to listen on")->capture_default_str();
  c->add_option("--port", f->port, "Port (0: any free one, printed on stderr)")
      ->capture_default_str();
  c->add_option("--max-batch", f->max_batch, "Queries per micro-batch")->capture_default_str();
  c->add_option("--max-wait-ms", f->max_wait_ms, "How long a micro-batch waits for company")
      ->capture_default_str();
  c->add_option("--max-queue", f->max_queue, "Queries waiting, at most (beyond: 503)")
      ->capture_default_str();
  c->add_option("--max-k", f->max_k, "Largest k a request may ask for")->capture_default_str();
  c->add_option("--max-queries", f->max_queries, "Queries per request, at most")
      ->capture_default_str();
  c->add_option("--max-body-kib", f->max_body_kib, "Request body size limit (beyond: 413)")
      ->capture_default_str();
  c->add_option("--http-threads", f->http_threads, "Connections served at once")
      ->capture_default_str();
  c->add_option("--max-documents", f->max_documents, "Documents one POST /documents may hold")
      ->capture_default_str();
  c->add_option("--write-token-file", f->write_token_file,
                "File whose first line is the token writes must give (Authorization: Bearer "
                "TOKEN); needed to write where --host is not a loopback address");
  c->add_flag("--read-only", f->read_only, "Refuse every write");
  c->add_option("--write-wait", f->write_wait,
                "Seconds a write waits for another process's change of the collection (then 503)")
      ->capture_default_str();
  c->add_flag("--no-merge", f->no_merge,
              "Do not merge a collection's segments in the background (lcrwmd compact later)");
  f->engine.add_backend(c);
  c->callback([f] { serve(*f); });
}

}  // namespace lcrwmd::app
