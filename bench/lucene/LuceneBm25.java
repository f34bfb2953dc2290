// Lucene's BM25 beside lcrwmd's bm25 (bench/typed_search.py runs it): the same documents, stop
// words and typed queries, Lucene's StandardAnalyzer and BM25Similarity (k1 1.2, b 0.75), one
// thread, each query a disjunction of its terms ranked by a TopScoreDocCollector whose
// totalHitsThreshold is k (which lets Lucene skip blocks by their maxima: block-max WAND).
//
//   java -cp lucene-core.jar:lucene-analyzers-common.jar:. LuceneBm25 DOCS.tsv QUERIES.tsv \
//        STOPWORDS.txt K RUNS INDEX_DIR OUT.tsv
//
// DOCS.tsv and QUERIES.tsv: id<TAB>label<TAB>text. Prints JSON (index seconds, each run's
// per-query milliseconds) on stdout and writes each query's top-k (query id<TAB>rank<TAB>doc
// id<TAB>score) to OUT.tsv.
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;

public final class LuceneBm25 {
  private static String[] fields(String line) {
    String[] f = line.split("\t", 3);
    return f.length == 3 ? f : null;
  }

  private static List<String> terms(Analyzer analyzer, String text) throws Exception {
    LinkedHashSet<String> out = new LinkedHashSet<>();
    try (TokenStream ts = analyzer.tokenStream("text", text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) out.add(term.toString());
      ts.end();
    }
    return new ArrayList<>(out);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 7) {
      System.err.println("usage: LuceneBm25 DOCS QUERIES STOPWORDS K RUNS INDEX_DIR OUT");
      System.exit(2);
    }
    List<String> stop = new ArrayList<>();
    for (String w : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8))
      if (!w.isBlank()) stop.add(w.trim());
    Analyzer analyzer = new StandardAnalyzer(new CharArraySet(stop, true));
    int k = Integer.parseInt(args[3]), runs = Integer.parseInt(args[4]);
    BM25Similarity similarity = new BM25Similarity(1.2f, 0.75f);

    long t0 = System.nanoTime();
    FSDirectory dir = FSDirectory.open(Paths.get(args[5]));
    IndexWriterConfig config = new IndexWriterConfig(analyzer).setSimilarity(similarity)
        .setOpenMode(IndexWriterConfig.OpenMode.CREATE).setRAMBufferSizeMB(512);
    try (IndexWriter writer = new IndexWriter(dir, config);
         BufferedReader in = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      for (String line; (line = in.readLine()) != null;) {
        String[] f = fields(line);
        if (f == null) continue;
        Document d = new Document();
        d.add(new StoredField("id", f[0]));
        d.add(new TextField("text", f[2], Field.Store.NO));
        writer.addDocument(d);
      }
      writer.forceMerge(1);  // one segment, as lcrwmd's one index file
    }
    double indexSeconds = (System.nanoTime() - t0) / 1e9;

    List<String> ids = new ArrayList<>();
    List<Query> queries = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
      String[] f = fields(line);
      if (f == null) continue;
      BooleanQuery.Builder b = new BooleanQuery.Builder();
      for (String t : terms(analyzer, f[2]))
        b.add(new TermQuery(new Term("text", t)), BooleanClause.Occur.SHOULD);
      ids.add(f[0]);
      queries.add(b.build());
    }

    try (DirectoryReader reader = DirectoryReader.open(dir)) {
      IndexSearcher searcher = new IndexSearcher(reader);  // no executor: one thread
      searcher.setSimilarity(similarity);
      StringBuilder json = new StringBuilder();
      json.append("{\"engine\": \"lucene ").append(org.apache.lucene.util.Version.LATEST)
          .append("\", \"documents\": ").append(reader.numDocs())
          .append(", \"index_seconds\": ").append(indexSeconds).append(", \"runs_ms\": [");
      ScoreDoc[][] last = new ScoreDoc[queries.size()][];
      for (int r = 0; r < runs; ++r) {
        double[] ms = new double[queries.size()];
        for (int q = 0; q < queries.size(); ++q) {
          long s = System.nanoTime();
          TopScoreDocCollector c = TopScoreDocCollector.create(k, k);
          searcher.search(queries.get(q), c);
          last[q] = c.topDocs().scoreDocs;
          ms[q] = (System.nanoTime() - s) / 1e6;
        }
        json.append(r > 0 ? ", " : "").append(Arrays.toString(ms));
      }
      json.append("]}");
      System.out.println(json);
      try (PrintWriter out = new PrintWriter(args[6], StandardCharsets.UTF_8)) {
        for (int q = 0; q < queries.size(); ++q)
          for (int t = 0; t < last[q].length; ++t)
            out.println(ids.get(q) + "\t" + t + "\t"
                        + reader.document(last[q][t].doc).get("id") + "\t" + last[q][t].score);
      }
    }
  }
}
