#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"

namespace lcrwmd {
namespace {

// Line reader over zlib's gzread, which reads plain files transparently.
class GzLineReader {
 public:
  explicit GzLineReader(const std::string& path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) throw Error(path + ": cannot open: " + std::strerror(errno));
    gzbuffer(file_, 1 << 20);
  }
  ~GzLineReader() { gzclose(file_); }
  GzLineReader(const GzLineReader&) = delete;
  GzLineReader& operator=(const GzLineReader&) = delete;

  bool next(std::string& line) {
    line.clear();
    for (;;) {
      if (begin_ == end_ && !fill()) return !line.empty();
      const char* nl =
          static_cast<const char*>(std::memchr(buf_.get() + begin_, '\n', end_ - begin_));
      std::size_t stop = nl ? static_cast<std::size_t>(nl - buf_.get()) : end_;
      line.append(buf_.get() + begin_, stop - begin_);
      begin_ = nl ? stop + 1 : end_;
      if (nl) return true;
    }
  }

 private:
  bool fill() {
    int n = gzread(file_, buf_.get(), kBuf);
    if (n < 0) {
      int err = 0;
      const char* msg = gzerror(file_, &err);
      throw Error(path_ + ": read error: " + (msg ? msg : "unknown"));
    }
    begin_ = 0;
    end_ = static_cast<std::size_t>(n);
    return n > 0;
  }

  static constexpr unsigned kBuf = 1 << 20;
  std::string path_;
  gzFile file_ = nullptr;
  std::unique_ptr<char[]> buf_{new char[kBuf]};
  std::size_t begin_ = 0, end_ = 0;
};

}  // namespace

void read_tsv(const std::string& path, const std::function<void(RawDocument&&)>& visit) {
  GzLineReader reader(path);
  std::string line;
  std::size_t line_no = 0;
  while (reader.next(line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::size_t t1 = line.find('\t');
    const std::size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    const std::string where = path + ":" + std::to_string(line_no);
    if (t2 == std::string::npos)
      throw Error(where + ": malformed line: expected id<TAB>label<TAB>text");
    if (t1 == 0) throw Error(where + ": empty document id");
    RawDocument d;
    d.id = line.substr(0, t1);
    d.label = line.substr(t1 + 1, t2 - t1 - 1);
    d.text = line.substr(t2 + 1);  // further TABs belong to the text
    d.line = line_no;
    visit(std::move(d));
  }
}

std::vector<RawDocument> read_tsv(const std::string& path) {
  std::vector<RawDocument> docs;
  read_tsv(path, [&](RawDocument&& d) { docs.push_back(std::move(d)); });
  return docs;
}

}  // namespace lcrwmd
