// lcrwmd learn: a word metric learned from an index's labels (Supervised WMD), written whole
// or not at all, with a line of progress per epoch; Ctrl-C stops it and writes nothing.
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "app/json_out.h"
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

double per(std::size_t part, std::size_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

nlohmann::json work_json(const LearnWork& w) {
  return {{"candidates_seconds", w.candidates_seconds},
          {"distance_seconds", w.distance_seconds},
          {"gradient_seconds", w.gradient_seconds},
          {"held_out_seconds", w.held_out_seconds},
          {"transports", w.transports},
          {"sinkhorn_iterations", w.sinkhorn_iterations}};
}

nlohmann::json options_json(const LearnOptions& o) {
  return {{"dim", o.out_dim},
          {"centroid_epochs", o.centroid_epochs},
          {"epochs", o.transport_epochs},
          {"batch", o.batch},
          {"neighbors", o.neighbors},
          {"held_out", o.held_out},
          {"patience", o.patience},
          {"epoch_documents", o.epoch_documents},
          {"lambda", o.transport.lambda},
          {"seed", o.seed}};
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
    bool json = false;
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
  c->add_option("--epoch-documents", f->o.epoch_documents,
                "Documents an epoch learns from: a fresh random sample each epoch where the "
                "training documents are more (0: all)")
      ->capture_default_str();
  c->add_option("--held-out", f->o.held_out,
                "Share of the labelled documents held out to choose the metric and stop early "
                "(at most " +
                    std::to_string(kMostHeldOut) + ")")
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
  c->add_flag("--json", f->json,
              "Also print a JSON summary on stdout: the options, each epoch's loss, held-out "
              "error and work, and where the time went");
  c->callback([f] {
    if (Cluster::current().size() > 1) throw Error("learn runs in one process, not under mpirun");
    set_threads(f->threads);
    const auto t = Clock::now();
    const Index index = load_index(f->index);
    note("index %s: %zu documents, %zu words, dim %zu (%.2f s)", f->index.c_str(), index.n_docs(),
         index.vocab_size(), index.dim(), since(t));
    const StopOnSignal stop;
    nlohmann::json epochs = nlohmann::json::array();
    LearnWork before;  // at the previous epoch's end
    const LearnCallback progress = [&](const LearnProgress& p) {
      if (!p.epoch_done()) return !stop.requested();
      const LearnWork epoch = p.work - before;
      before = p.work;
      const bool transport = std::string(p.stage) == "transport";
      std::string scale;
      if (transport) {
        char s[96];
        std::snprintf(s, sizeof s, "; cost scale %.3g, %.0f Sinkhorn iterations a transport",
                      p.cost_scale, per(epoch.sinkhorn_iterations, epoch.transports));
        scale = s;
      }
      note("learn: %s epoch %zu: loss %.4f, held-out error %.2f%% (%.1f s%s)", p.stage, p.epoch,
           p.loss, 100 * p.held_out_error, p.seconds, scale.c_str());
      epochs.push_back({{"stage", p.stage},
                        {"epoch", p.epoch},
                        {"loss", p.loss},
                        {"held_out_error", p.held_out_error},
                        {"seconds", p.seconds},
                        {"cost_scale", transport ? nlohmann::json(p.cost_scale) : nullptr},
                        {"work", work_json(epoch)}});
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
    const std::string trained = std::to_string(r.train_documents) + " documents trained on" +
                                (r.epoch_documents < r.train_documents
                                     ? " (" + std::to_string(r.epoch_documents) + " an epoch)"
                                     : "");
    note("metric %s: map %zu x %zu, %zu word weights; %s; %s, %zu held out%s (%.2f s)",
         f->output.c_str(), metric.out_dim(), metric.in_dim(), metric.words().size(),
         errors.c_str(), trained.c_str(), r.held_out_documents,
         r.unlabelled ? (", " + std::to_string(r.unlabelled) + " unlabelled left out").c_str() : "",
         since(t));
    const LearnWork& w = r.work;
    note(
        "learn: time in candidates %.1f s, distances %.1f s, gradients %.1f s, held-out votes "
        "%.1f s; %zu transports, %.0f Sinkhorn iterations each",
        w.candidates_seconds, w.distance_seconds, w.gradient_seconds, w.held_out_seconds,
        w.transports, per(w.sinkhorn_iterations, w.transports));
    if (f->json) {
      const nlohmann::json j = {
          {"index", f->index},
          {"metric", f->output},
          {"options", options_json(f->o)},
          {"map", {metric.out_dim(), metric.in_dim()}},
          {"words", metric.words().size()},
          {"train_documents", r.train_documents},
          {"held_out_documents", r.held_out_documents},
          {"epoch_documents", r.epoch_documents},
          {"unlabelled", r.unlabelled},
          {"held_out_error", r.held_out_documents ? nlohmann::json(r.held_out_error) : nullptr},
          {"unsupervised_error",
           r.held_out_documents ? nlohmann::json(r.unsupervised_error) : nullptr},
          {"epochs", epochs},
          {"seconds", since(t)},
          {"work", work_json(w)}};
      std::printf("%s\n", to_bytes(j).c_str());
    }
  });
}

}  // namespace lcrwmd::app
