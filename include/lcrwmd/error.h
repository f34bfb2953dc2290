#pragma once
// The one exception type for user-facing errors: bad input, unreadable files, impossible
// requests. Its message names the file, line, entry or document at fault.
#include <stdexcept>
#include <string>

namespace lcrwmd {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace lcrwmd
