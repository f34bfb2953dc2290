// libFuzzer: the embeddings readers (word2vec binary, word2vec/GloVe/fastText text; the format
// is told from the bytes). Any input is either embeddings or an lcrwmd::Error.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const lcrwmd::fuzz::InputFile in(data, size);
  try {
    const lcrwmd::Embeddings e = lcrwmd::Embeddings::load(in.path());
    for (std::size_t i = 0; i < e.size(); ++i) (void)e.vector(i)[e.dim() - 1];
  } catch (const lcrwmd::Error&) {
  }
  return 0;
}
