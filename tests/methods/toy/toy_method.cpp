// A method defined outside the library, in a folder of its own, as a user would add one: its
// description, its parameters and its CPU batch, registered when the program starts. The test
// binaries that link it (a command line, a Python module: tests/CMakeLists.txt) reach it through
// every front end without a line of them changed (python/tests/test_toy_method.py).
//
// toy: Word Centroid Distance raised to the power toy_power and multiplied by toy_scale; a
// ranking the centroids' own, and distances a test can work out from wcd's.
#include <cmath>
#include <limits>
#include <memory>

#include "lcrwmd/method.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"

namespace lcrwmd {
namespace {

constexpr Parameter kToyParameters[] = {{.name = "toy_power",
                                         .kind = Parameter::Kind::integer,
                                         .default_value = 1,
                                         .min = 1,
                                         .max = 4,
                                         .help = "the power the centroids' distance is raised to"},
                                        {.name = "toy_scale",
                                         .kind = Parameter::Kind::number,
                                         .default_value = 2.5,
                                         .min = 0,
                                         .max = std::numeric_limits<double>::infinity(),
                                         .help = "what the powered distance is multiplied by"}};

class Toy final : public BatchDistance {
 public:
  explicit Toy(const MethodContext& c)
      : wcd_(make_wcd(c.index, c.queries)),
        values_(c.queries.size() * c.index.n_docs()),
        power_(
            static_cast<int>(parameter_value(c.options.method, c.options.parameters, "toy_power"))),
        scale_(parameter_value(c.options.method, c.options.parameters, "toy_scale")) {}

  void compute(float* out) override {
    wcd_->compute(out);
    for (std::size_t i = 0; i < values_; ++i)
      out[i] = static_cast<float>(scale_ * std::pow(static_cast<double>(out[i]), power_));
  }

 private:
  std::unique_ptr<BatchDistance> wcd_;
  std::size_t values_;
  int power_;
  double scale_;
};

constexpr MethodImpl kToyImpl{
    .cpu = {.make = [](const MethodContext& c) -> std::unique_ptr<BatchDistance> {
      return std::make_unique<Toy>(c);
    }}};

constinit const MethodInfo kToyMethod{.name = "toy",
                                      .summary = "a test's method: toy_scale * wcd^toy_power",
                                      .parameters = kToyParameters,
                                      .impl = &kToyImpl};

[[maybe_unused]] const bool kRegistered = (register_method(kToyMethod), true);

}  // namespace
}  // namespace lcrwmd
