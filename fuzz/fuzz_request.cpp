// libFuzzer: what `lcrwmd serve` makes of a request body (app/request.h), for /search,
// /explain and /documents. Any bytes give options or a 4xx RequestError, and the error's reply can
// always be written (it may echo bytes that are not UTF-8); never a crash, another exception or a
// hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "app/json_out.h"
#include "app/request.h"

namespace {

void reply_to(const lcrwmd::app::RequestError& e) {
  if (e.status < 400 || e.status > 499) std::abort();
  (void)lcrwmd::app::to_bytes(lcrwmd::app::error_json(e.status, e.field, e.what()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lcrwmd::app;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  nlohmann::json parsed;
  try {
    parsed = parse_body(body);
  } catch (const RequestError& e) {
    reply_to(e);
    return 0;
  }
  try {
    const SearchRequest r = parse_search(parsed, RequestLimits{});
    (void)to_bytes(nlohmann::json(r.names));
  } catch (const RequestError& e) {
    reply_to(e);
  }
  try {
    (void)parse_explain(parsed);
  } catch (const RequestError& e) {
    reply_to(e);
  }
  try {
    // What an add keeps must be a TSV line's fields: no tab or line break in any of them.
    for (const lcrwmd::RawDocument& d : parse_documents(parsed, RequestLimits{}))
      for (const std::string* field : {&d.id, &d.label, &d.text})
        if (field->find_first_of("\t\r\n") != std::string::npos || d.id.empty()) std::abort();
  } catch (const RequestError& e) {
    reply_to(e);
  }
  return 0;
}
