#pragma once
// Ctrl-C (SIGINT) and SIGTERM, while a StopOnSignal lives, ask long work (training vectors,
// learning a metric) to stop at its next progress report instead of ending the process, so
// that it can remove its temporary files and leave nothing half-written.
#include <signal.h>

namespace lcrwmd::app {

inline volatile sig_atomic_t stop_signalled = 0;
extern "C" inline void on_stop_signal(int) { stop_signalled = 1; }

class StopOnSignal {
 public:
  StopOnSignal() {
    stop_signalled = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignal() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  // Whether a signal has asked to stop.
  bool requested() const { return stop_signalled != 0; }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

}  // namespace lcrwmd::app
