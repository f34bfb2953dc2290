// libFuzzer: the document reader (id<TAB>label<TAB>text, plain or gzip, told from the bytes).
// Any input is documents or an lcrwmd::Error.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"
#include "lcrwmd/text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const lcrwmd::fuzz::InputFile in(data, size);
  try {
    for (const lcrwmd::RawDocument& d : lcrwmd::read_tsv(in.path())) (void)lcrwmd::tokenize(d.text);
  } catch (const lcrwmd::Error&) {
  }
  return 0;
}
