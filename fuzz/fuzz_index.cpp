// libFuzzer: the index loader, with its checksums (the first byte of the input chooses) and
// without them, where only the structural checks stand between the bytes and the searches.
// Any input is an index whose every name and row can be read, or an lcrwmd::Error.
#include <cstddef>
#include <cstdint>

#include "core/posting_reader.h"
#include "fuzz_input.h"
#include "lcrwmd/error.h"
#include "lcrwmd/index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool verify = data[0] & 1;
  const lcrwmd::fuzz::InputFile in(data + 1, size - 1);
  try {
    const lcrwmd::Index ix = lcrwmd::Index::load(in.path(), verify);
    std::size_t sum = 0;
    for (std::size_t i = 0; i < ix.n_docs(); ++i)
      sum += ix.doc_id(i).size() + ix.label(i).size() + (ix.indptr()[i + 1] - ix.indptr()[i]);
    for (std::size_t u = 0; u < ix.vocab_size(); ++u) sum += ix.word(u).size() + ix.doc_freq(u);
    for (std::size_t t = 0; t < ix.n_terms(); ++t) {  // every posting decoded
      lcrwmd::PostingReader p(ix.postings(t));
      sum += ix.term(t).size() + ix.term_doc_freq(t);
      for (std::size_t e = 0; e < p.size(); ++e) sum += p.doc(e) + p.count(e);
    }
    if (ix.has_terms())
      for (std::size_t i = 0; i < ix.n_docs(); ++i) sum += ix.doc_length(i);
    if (const lcrwmd::Metric* m = ix.metric())
      for (const std::string& w : m->words()) sum += w.size() + (m->weight(w) > 0);
    (void)sum;
  } catch (const lcrwmd::Error&) {
  }
  return 0;
}
