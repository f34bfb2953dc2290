// Uses the installed library as a user would: an index of three documents from embeddings in
// memory, one query, its nearest document by symmetric LC-RWMD and by WMD.
#include <lcrwmd/cpu.h>
#include <lcrwmd/embeddings.h>
#include <lcrwmd/index.h>
#include <lcrwmd/query.h>
#include <lcrwmd/search.h>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  using namespace lcrwmd;
  const Embeddings emb({"goal", "match", "tennis", "racket"}, {1, 0, 0.9f, 0.1f, 0, 1, 0.1f, 0.9f},
                       2);
  const std::vector<RawDocument> docs = {
      {"s", "sport", "goal match", 1}, {"t", "tennis", "tennis racket", 2}, {"m", "", "match", 3}};
  const Index index = Index::from_data(build_index_data(emb, docs, {}));
  const QuerySet q = make_query_set(index, {{"q", "", "racket tennis tennis", 1}}, {&emb});
  for (const Method m : {Method("lc-rwmd"), Method("wmd")}) {
    SearchOptions o;
    o.method = m;
    const SearchResults r = search(index, q, 1, o);
    std::printf("%s %s %.6f\n", to_string(m), std::string(index.doc_id(r.indices[0])).c_str(),
                static_cast<double>(r.distances[0]));
    if (index.doc_id(r.indices[0]) != "t") return 1;
  }
  return 0;
}
