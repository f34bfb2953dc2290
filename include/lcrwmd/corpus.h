#pragma once
// Documents as TSV lines "id<TAB>label<TAB>text", plain or gzip-compressed.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lcrwmd {

struct RawDocument {
  std::string id;
  std::string label;  // may be empty
  std::string text;
  std::size_t line = 0;  // 1-based line in its file, for error messages
  // A document given as tokens (the Python module's token lists): they are taken as they are,
  // stop words aside, instead of tokenizing `text`.
  bool pretokenized = false;
  std::vector<std::string> tokens{};
};

// Streams the documents of a TSV file (gzip detected from content) to visit. Blank lines are
// skipped. Throws Error naming file and line for a line without three fields or an empty id.
void read_tsv(const std::string& path, const std::function<void(RawDocument&&)>& visit);

std::vector<RawDocument> read_tsv(const std::string& path);

}  // namespace lcrwmd
