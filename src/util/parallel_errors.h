#pragma once
// An exception must not leave an OpenMP region: the first one thrown inside is kept and
// rethrown by the thread that opened the region, once it has closed.
#include <exception>
#include <mutex>

namespace lcrwmd {

class ParallelErrors {
 public:
  template <typename Body>
  void run(Body&& body) noexcept {
    try {
      body();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace lcrwmd
