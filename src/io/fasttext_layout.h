#pragma once
// The layout of a fastText model file, checked front to back before libfasttext reads it (it
// reads a truncated dictionary forever and allocates whatever a matrix header says) and after
// training writes one (it does not check its writes).
#include "io/mapped_file.h"

namespace lcrwmd {

// An Error naming the file and the byte where it is not a whole fastText model of word vectors:
// truncated, foreign, or a supervised or quantized model.
void check_fasttext_layout(const MappedFile& file);

}  // namespace lcrwmd
