#include "collection/collection_files.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "io/mapped_file.h"
#include "lcrwmd/error.h"

namespace lcrwmd::collection {
namespace {

constexpr std::string_view kMagic = "lcrwmd-collection 1";
constexpr char kDeletionMagic[8] = {'L', 'C', 'R', 'W', 'D', 'E', 'L', '1'};

std::uint64_t checksum(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

bool parse_u64(std::string_view s, std::uint64_t& out, int base = 10) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

// Exactly 16 lowercase hex digits, as hex() writes them (a flipped case is damage too).
bool parse_hex(std::string_view s, std::uint64_t& out) {
  return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos &&
         parse_u64(s, out, 16);
}

// Splits off the first space-separated field of `rest`.
std::string_view field(std::string_view& rest) {
  const auto space = rest.find(' ');
  const std::string_view f = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  return f;
}

bool numbered(std::string_view name, std::string_view prefix, std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix))
    return false;
  const std::string_view digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return digits.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_segment_name(std::string_view name) { return numbered(name, "seg-", ".idx"); }

bool is_deletions_name(std::string_view name) {
  const auto dot = name.find(".del-");
  return dot != std::string_view::npos && numbered(name.substr(0, dot), "seg-", "") &&
         numbered(name.substr(dot), ".del-", "");
}

}  // namespace

std::string hex(std::uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

std::string segment_file(std::uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "seg-%06llu.idx", static_cast<unsigned long long>(n));
  return buf;
}

std::string deletions_file(std::uint64_t n, std::uint64_t generation) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "seg-%06llu.del-%06llu", static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(generation));
  return buf;
}

bool is_collection_file(std::string_view name) {
  if (const auto tmp = name.find(".tmp."); tmp != std::string_view::npos)
    name = name.substr(0, tmp);
  return is_segment_name(name) || is_deletions_name(name) || name == kManifest;
}

std::string format_manifest(const Manifest& m) {
  std::string s(kMagic);
  s += "\ngeneration " + std::to_string(m.generation);
  s += "\nnext-segment " + std::to_string(m.next_segment);
  s += "\nembeddings " + hex(m.embeddings_fingerprint) + " " + m.embeddings;
  for (const SegmentEntry& e : m.segments)
    s += "\nsegment " + e.file + " " + std::to_string(e.docs) + " " + std::to_string(e.bytes) +
         " " + std::to_string(e.deleted) + " " + (e.deletions.empty() ? "-" : e.deletions);
  s += "\n";
  return s + "checksum " + hex(checksum(s)) + "\n";
}

Manifest parse_manifest(std::string_view text, const std::string& where) {
  std::size_t line_no = 0;
  const auto bad = [&](const std::string& what) {
    return Error(where + ": line " + std::to_string(line_no) + ": " + what +
                 " (a damaged collection manifest)");
  };
  // The checksum line first: a torn or edited file is named as such before its fields are.
  const auto last = text.rfind("\nchecksum ");
  std::uint64_t sum = 0;
  if (last == std::string_view::npos || !text.ends_with("\n") ||
      !parse_hex(text.substr(last + 10, text.size() - last - 11), sum))
    throw Error(where + ": no checksum line at its end: the manifest is truncated or not one");
  const std::string_view body = text.substr(0, last + 1);
  if (checksum(body) != sum)
    throw Error(where + ": its checksum does not match its contents: the manifest is damaged");
  Manifest m;
  bool generation = false, next = false, embeddings = false;
  std::size_t pos = 0;
  while (pos < body.size()) {
    const std::size_t eol = body.find('\n', pos);
    std::string_view rest = body.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line_no == 1) {
      if (rest != kMagic) throw bad("not a collection manifest of this version");
      continue;
    }
    const std::string_view key = field(rest);
    if (key == "generation") {
      if (generation || !parse_u64(rest, m.generation)) throw bad("a bad generation");
      generation = true;
    } else if (key == "next-segment") {
      if (next || !parse_u64(rest, m.next_segment)) throw bad("a bad next-segment");
      next = true;
    } else if (key == "embeddings") {
      if (embeddings || !parse_hex(field(rest), m.embeddings_fingerprint))
        throw bad("a bad embeddings line");
      m.embeddings = std::string(rest);
      embeddings = true;
    } else if (key == "segment") {
      SegmentEntry e;
      e.file = std::string(field(rest));
      // seg-N.idx, as the collection writes it: its number names its deletion files too.
      if (!is_segment_name(e.file) ||
          !parse_u64(std::string_view(e.file).substr(4, e.file.size() - 8), e.number) ||
          segment_file(e.number) != e.file)
        throw bad("a bad segment file name '" + e.file + "'");
      if (!parse_u64(field(rest), e.docs) || !parse_u64(field(rest), e.bytes) ||
          !parse_u64(field(rest), e.deleted))
        throw bad("a bad segment line");
      const std::string_view del = field(rest);
      if (!rest.empty()) throw bad("a segment line with extra fields");
      if (del != "-") {
        e.deletions = std::string(del);
        if (!is_deletions_name(e.deletions) ||
            !e.deletions.starts_with(e.file.substr(0, e.file.size() - 4) + ".del-"))
          throw bad("a bad deletion file name '" + e.deletions + "'");
      }
      if ((e.deleted > 0) != (del != "-") || e.deleted > e.docs || e.docs == 0)
        throw bad("a segment's counts disagree");
      for (const SegmentEntry& other : m.segments)
        if (other.file == e.file) throw bad("segment " + e.file + " listed twice");
      m.segments.push_back(std::move(e));
    } else {
      throw bad("an unknown line '" + std::string(key) + "'");
    }
  }
  if (!generation || !next || !embeddings) throw bad("a field is missing");
  if (m.segments.empty()) throw bad("no segment");
  return m;
}

std::string format_deletions(std::uint64_t segment_docs, std::span<const std::uint32_t> deleted) {
  std::string s(kDeletionMagic, sizeof kDeletionMagic);
  const std::uint64_t head[2] = {segment_docs, deleted.size()};
  s.append(reinterpret_cast<const char*>(head), sizeof head);
  s.append(reinterpret_cast<const char*>(deleted.data()), deleted.size_bytes());
  const std::uint64_t sum = checksum(s);
  s.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return s;
}

std::vector<std::uint32_t> parse_deletions(std::string_view bytes, std::uint64_t segment_docs,
                                           const std::string& where) {
  constexpr std::size_t kHead = sizeof kDeletionMagic + 2 * sizeof(std::uint64_t);
  if (bytes.size() < kHead + sizeof(std::uint64_t) ||
      std::memcmp(bytes.data(), kDeletionMagic, sizeof kDeletionMagic) != 0)
    throw Error(where + ": not a deletion file, or truncated");
  std::uint64_t head[2], sum = 0;
  std::memcpy(head, bytes.data() + sizeof kDeletionMagic, sizeof head);
  if (head[1] > (bytes.size() - kHead - sizeof sum) / sizeof(std::uint32_t) ||
      bytes.size() != kHead + head[1] * sizeof(std::uint32_t) + sizeof sum)
    throw Error(where + ": its size does not match its count: truncated or damaged");
  std::memcpy(&sum, bytes.data() + bytes.size() - sizeof sum, sizeof sum);
  if (checksum(bytes.substr(0, bytes.size() - sizeof sum)) != sum)
    throw Error(where + ": its checksum does not match its contents: damaged");
  if (head[0] != segment_docs)
    throw Error(where + ": written for a segment of " + std::to_string(head[0]) +
                " documents, not " + std::to_string(segment_docs));
  std::vector<std::uint32_t> out(head[1]);
  std::memcpy(out.data(), bytes.data() + kHead, head[1] * sizeof(std::uint32_t));
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] >= segment_docs || (i > 0 && out[i] <= out[i - 1]))
      throw Error(where + ": entry " + std::to_string(i) + " is out of order or range");
  return out;
}

std::uint64_t file_fingerprint(const std::string& path) {
  // Remembered by the file's identity and last change: a process that adds again and again
  // (a service) reads a large embeddings file once, and again only once it changes.
  struct Seen {
    dev_t dev;
    ino_t ino;
    off_t size;
    std::int64_t mtime_ns;
    std::uint64_t fingerprint;
  };
  static std::mutex mutex;
  static std::map<std::string, Seen> seen;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": " + std::strerror(errno));
  const std::int64_t mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  {
    const std::lock_guard lock(mutex);
    const auto it = seen.find(path);
    if (it != seen.end() && it->second.dev == st.st_dev && it->second.ino == st.st_ino &&
        it->second.size == st.st_size && it->second.mtime_ns == mtime_ns)
      return it->second.fingerprint;
  }
  const MappedFile f(path);
  f.read_sequentially();
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  constexpr std::size_t kBlock = std::size_t{64} << 20;
  for (std::size_t at = 0; at < f.size(); at += kBlock) {
    const std::size_t n = std::min(kBlock, f.size() - at);
    XXH3_64bits_update(state, f.data() + at, n);
    f.release(at, at + n);
  }
  const std::uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  const std::lock_guard lock(mutex);
  seen[path] = Seen{st.st_dev, st.st_ino, st.st_size, mtime_ns, h};
  return h;
}

}  // namespace lcrwmd::collection
