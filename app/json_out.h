#pragma once
// JSON that the command line and the service write: their bytes, explanations and methods.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "lcrwmd/explain.h"
#include "lcrwmd/method.h"

namespace lcrwmd::app {

// The bytes of `j`. Never throws: bytes that are not UTF-8 (a word or a request's text echoed
// back) are replaced, so any answer, an error included, can be written.
std::string to_bytes(const nlohmann::json& j);

// An explanation (lcrwmd/explain.h), one writer for `lcrwmd explain --json` and serve's
// /explain: every flow, or the `top` largest of each list (top 0: every flow). A list cut short
// carries "flows_left_out" beside its "flows".
nlohmann::json explanation_json(const Explanation& e, std::size_t top = 0);

// One method's description (lcrwmd/method.h), for `lcrwmd methods --json` and serve's /info:
// its name, summary, properties, directions, what it answers and its parameters
// (parameter_json each).
nlohmann::json method_json(const MethodInfo& m);
// A parameter's description: its name (the JSON field), flag, type, default, range (max null:
// none) and help.
nlohmann::json parameter_json(const Parameter& p);

}  // namespace lcrwmd::app
