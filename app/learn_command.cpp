// lcrwmd learn: a word metric learned from an index's labels (Supervised WMD), written whole
// or not at all, with a line of progress per epoch; Ctrl-C stops it and writes nothing.
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "app/query_input.h"
#include "app/stop_on_signal.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/learn.h"

namespace lcrwmd::app {
namespace {

std::string percent(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f%%", 100 * x);
  return s;
}

}  // namespace

void add_learn(CLI::App& app) {
  auto* c = app.add_subcommand(
      "learn",
      "Learn a word metric from an index's labels (Supervised WMD: a map of the word vectors "
      "and a weight per word); `lcrwmd build --metric` applies it to every method");
  struct Flags {
    std::string index, output;
    LearnOptions o;
    int threads = 0;
  };
  auto f = std::make_shared<Flags>();
  c->add_option("--index", f->index, "Index of labelled training documents")->required();
  c->add_option("--output", f->output, "Metric file to write (.lcm), whole or not at all")
      ->required();
  c->add_option("--dim", f->o.out_dim,
                "Dimension of the learned space (0: the vectors'; fewer starts from their "
                "principal directions)")
      ->capture_default_str();
  c->add_option("--epochs", f->o.transport_epochs,
                "Epochs on entropic transport (S-WMD), after the centroid epochs")
      ->capture_default_str();
  c->add_option("--centroid-epochs", f->o.centroid_epochs,
                "Epochs on the documents' centroids first (cheap; 0: none)")
      ->capture_default_str();
  c->add_option("--batch", f->o.batch, "Documents per gradient step")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--neighbors", f->o.neighbors,
                "Candidate neighbours per document (its nearest by centroid in the current "
                "metric)")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--held-out", f->o.held_out,
                "Share of the labelled documents held out to choose the metric and stop early")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  c->add_option("--patience", f->o.patience,
                "Epochs without a better held-out error before a stage ends")
      ->check(at_least_one())
      ->capture_default_str();
  c->add_option("--lambda", f->o.transport.lambda,
                "Entropic transport's strength, relative to the costs' scale (each epoch's "
                "median largest word cost to a nearest document; larger: nearer the exact "
                "transport, more Sinkhorn iterations)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--seed", f->o.seed, "Random seed (the same metric for the same seed)")
      ->capture_default_str();
  c->add_option("--threads", f->threads, "Threads (0: every core)")->capture_default_str();
  c->callback([f] {
    if (Cluster::current().size() > 1) throw Error("learn runs in one process, not under mpirun");
    set_threads(f->threads);
    const auto t = Clock::now();
    const Index index = load_index(f->index);
    note("index %s: %zu documents, %zu words, dim %zu (%.2f s)", f->index.c_str(), index.n_docs(),
         index.vocab_size(), index.dim(), since(t));
    const StopOnSignal stop;
    const LearnCallback progress = [&](const LearnProgress& p) {
      if (!p.epoch_done()) return !stop.requested();
      std::string transport;
      if (p.work.transports > 0) {
        char s[96];
        std::snprintf(s, sizeof s, "; cost scale %.3g, %.0f Sinkhorn iterations a transport",
                      p.cost_scale,
                      static_cast<double>(p.work.sinkhorn_iterations) /
                          static_cast<double>(p.work.transports));
        transport = s;
      }
      note("learn: %s epoch %zu: loss %.4f, held-out error %.2f%% (%.1f s%s)", p.stage, p.epoch,
           p.loss, 100 * p.held_out_error, p.seconds, transport.c_str());
      return !stop.requested();
    };
    LearnReport r;
    const Metric metric = learn_metric(index, f->o, progress, &r);
    if (r.stopped) throw Error(f->output + ": learning interrupted; no metric written");
    metric.save(f->output);
    const std::string errors = r.held_out_documents == 0
                                   ? "nothing held out, the last metric kept"
                                   : "held-out error " + percent(r.held_out_error) +
                                         " (unsupervised " + percent(r.unsupervised_error) + ")";
    note(
        "metric %s: map %zu x %zu, %zu word weights; %s; %zu documents trained on, %zu held out%s "
        "(%.2f s)",
        f->output.c_str(), metric.out_dim(), metric.in_dim(), metric.words().size(), errors.c_str(),
        r.train_documents, r.held_out_documents,
        r.unlabelled ? (", " + std::to_string(r.unlabelled) + " unlabelled left out").c_str() : "",
        since(t));
    const LearnWork& w = r.work;
    note(
        "learn: time in candidates %.1f s, distances %.1f s, gradients %.1f s, held-out votes "
        "%.1f s; %zu transports, %.0f Sinkhorn iterations each",
        w.candidates_seconds, w.distance_seconds, w.gradient_seconds, w.held_out_seconds,
        w.transports,
        w.transports
            ? static_cast<double>(w.sinkhorn_iterations) / static_cast<double>(w.transports)
            : 0.0);
  });
}

}  // namespace lcrwmd::app
