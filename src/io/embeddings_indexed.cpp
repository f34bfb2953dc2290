// Indexed embeddings files (`lcrwmd embeddings`), little-endian:
//   [IndexedHeader: 64 bytes][vectors: f32 x count x dim][word offsets: u64 x (count + 1)]
//   [word bytes][pad to 8][slots: u32 x n_slots]
// A slot holds row + 1 of the word whose XXH3-64 hash probes to it (linear probing; 0: empty);
// n_slots is a power of two at least twice the words, so a lookup reads a slot or two.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "io/embeddings_scan.h"
#include "lcrwmd/atomic_file.h"
#include "lcrwmd/error.h"
#include "lcrwmd/string_map.h"

namespace lcrwmd {
namespace {

constexpr char kMagic[8] = {'L', 'C', 'R', 'W', 'M', 'D', 'E', 'M'};
constexpr std::uint32_t kVersion = 1;

struct IndexedHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t reserved;
  std::uint64_t count, dim;
  std::uint64_t offsets_at, bytes_at, slots_at, n_slots;
};
static_assert(sizeof(IndexedHeader) == 64);

std::uint64_t hash(std::string_view w) { return XXH3_64bits(w.data(), w.size()); }

// An indexed file read with pread(): a load of a few words reads a few small pieces, and
// maps nothing (a mapping's page faults bring in the pages around each piece too).
class IndexedFile {
 public:
  explicit IndexedFile(const std::string& path)
      : path_(path), fd_{::open(path.c_str(), O_RDONLY | O_CLOEXEC)} {
    if (fd_.fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0) throw bad("cannot stat");
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ < sizeof h_) throw bad("too small");
    read(0, &h_, sizeof h_);
    if (h_.version != kVersion)
      throw bad("version " + std::to_string(h_.version) + ", this build reads " +
                std::to_string(kVersion) + ": make it again with `lcrwmd embeddings`");
    const bool ok = h_.dim > 0 && h_.dim < (1u << 20) && h_.count < UINT32_MAX &&
                    h_.count <= (size_ - sizeof h_) / (4 * h_.dim) &&
                    h_.offsets_at == sizeof h_ + h_.count * h_.dim * 4 &&
                    (size_ - h_.offsets_at) / 8 > h_.count &&
                    h_.bytes_at == h_.offsets_at + (h_.count + 1) * 8 &&
                    h_.slots_at >= h_.bytes_at && h_.slots_at % 4 == 0 && h_.slots_at <= size_ &&
                    h_.n_slots >= 2 * h_.count && (h_.n_slots & (h_.n_slots - 1)) == 0 &&
                    (size_ - h_.slots_at) / 4 == h_.n_slots;
    if (!ok) throw bad("inconsistent header (damaged or truncated)");
  }

  const IndexedHeader& header() const { return h_; }

  void read(std::uint64_t offset, void* out, std::size_t bytes) const {
    auto* p = static_cast<char*>(out);
    while (bytes > 0) {
      const ::ssize_t got = ::pread(fd_.fd, p, bytes, static_cast<off_t>(offset));
      if (got <= 0) throw bad("cannot read (truncated?)");
      p += got, offset += static_cast<std::uint64_t>(got), bytes -= static_cast<std::size_t>(got);
    }
  }
  // Row r's word, its bounds checked (a probe may read any row).
  std::string word(std::uint64_t r) const {
    std::uint64_t at[2];
    read(h_.offsets_at + r * 8, at, sizeof at);
    if (at[0] > at[1] || at[1] > h_.slots_at - h_.bytes_at || at[1] - at[0] > 4096)
      throw bad("word table broken");
    std::string w(at[1] - at[0], '\0');
    read(h_.bytes_at + at[0], w.data(), w.size());
    return w;
  }
  // The row of `w`, or count where it is absent.
  std::uint64_t find(std::string_view w) const {
    const std::uint64_t mask = h_.n_slots - 1;
    for (std::uint64_t s = hash(w) & mask, probes = 0; probes < h_.n_slots;
         s = (s + 1) & mask, ++probes) {
      std::uint32_t slot = 0;
      read(h_.slots_at + s * 4, &slot, sizeof slot);
      if (slot == 0) return h_.count;
      if (slot - 1u < h_.count && word(slot - 1u) == w) return slot - 1u;
    }
    return h_.count;
  }
  Error bad(const std::string& why) const {
    return Error(path_ + ": not a valid indexed embeddings file: " + why);
  }

 private:
  // Closed however the constructor ends (a damaged header throws from it).
  struct Fd {
    explicit Fd(int f) : fd(f) {}
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
  };
  std::string path_;
  Fd fd_;
  std::uint64_t size_ = 0;
  IndexedHeader h_{};
};

}  // namespace

bool is_indexed_embeddings(const MappedFile& file) {
  return file.size() >= sizeof(kMagic) && std::memcmp(file.data(), kMagic, sizeof kMagic) == 0;
}

Embeddings load_indexed_embeddings(const MappedFile& file, const WordSet* only) {
  const IndexedFile f(file.path());
  const IndexedHeader& h = f.header();
  std::vector<std::uint64_t> rows;
  if (only == nullptr) {
    rows.resize(h.count);
    for (std::uint64_t r = 0; r < h.count; ++r) rows[r] = r;
  } else {
    for (const std::string& w : *only)
      if (const std::uint64_t r = f.find(w); r < h.count) rows.push_back(r);
    std::sort(rows.begin(), rows.end());  // the file's order, as a full read gives
  }
  Embeddings e;
  e.source_ = file.path();
  e.format_ = "indexed";
  e.dim_ = h.dim;
  e.file_words_ = h.count;
  e.vectors_.reserve(rows.size() * e.dim_);
  std::vector<float> v(e.dim_);
  for (const std::uint64_t r : rows) {
    f.read(sizeof h + r * e.dim_ * 4, v.data(), e.dim_ * 4);
    double sq = 0;
    for (const float x : v) sq += double{x} * x;
    const std::string word = f.word(r);
    if (!(sq < 1e30))  // NaN, infinite or too large: a damaged file (the writer checked)
      throw f.bad("vector of word '" + word + "' not finite, or too large");
    e.add(word, v.data());
  }
  return e;
}

std::size_t Embeddings::write_indexed(const std::string& input, const std::string& output) {
  const MappedFile source(input);
  AtomicFile out(output);
  // Vectors are written as they are read; the words, kept, follow them with their table.
  struct Writer final : EmbeddingsSink {
    AtomicFile& out;
    std::size_t dim = 0;
    std::vector<std::string> words;
    WordSet seen;  // a word's later copies are skipped, as load() skips them
    explicit Writer(AtomicFile& f) : out(f) {}
    bool wanted(std::string_view) const override { return true; }
    void begin(std::string_view, std::size_t d, std::size_t) override { dim = d; }
    void entry(std::string_view word, const float* values) override {
      if (!seen.emplace(word).second) return;
      words.emplace_back(word);
      out.write(values, dim * sizeof(float));
    }
  };
  IndexedHeader h{};
  out.write(&h, sizeof h);  // patched at the end
  Writer w(out);
  scan_embeddings(source, w);
  if (w.words.size() >= UINT32_MAX) throw Error(input + ": too many words to index");
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.count = w.words.size();
  h.dim = w.dim;
  h.offsets_at = out.position();
  std::vector<std::uint64_t> offsets(h.count + 1, 0);
  for (std::size_t i = 0; i < h.count; ++i) offsets[i + 1] = offsets[i] + w.words[i].size();
  out.write(offsets.data(), offsets.size() * sizeof(std::uint64_t));
  h.bytes_at = out.position();
  for (const std::string& word : w.words) out.write(word);
  static const char zeros[8] = {};
  out.write(zeros, (8 - out.position() % 8) % 8);
  h.slots_at = out.position();
  h.n_slots = 2;
  while (h.n_slots < 2 * h.count) h.n_slots *= 2;
  std::vector<std::uint32_t> slots(h.n_slots, 0);
  const std::uint64_t mask = h.n_slots - 1;
  for (std::uint64_t r = 0; r < h.count; ++r) {
    std::uint64_t s = hash(w.words[r]) & mask;
    while (slots[s] != 0) s = (s + 1) & mask;
    slots[s] = static_cast<std::uint32_t>(r + 1);
  }
  out.write(slots.data(), slots.size() * sizeof(std::uint32_t));
  out.write_at(0, &h, sizeof h);
  out.commit();
  return h.count;
}

}  // namespace lcrwmd
