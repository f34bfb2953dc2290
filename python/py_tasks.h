#pragma once
// The bindings of what NLP work does with a distance (py_tasks.cpp): Index.classify, predict,
// predict_proba and classes.
#include "python/py_index.h"

namespace lcrwmd::python {

void bind_tasks(py::class_<PyIndex>& cls);

}  // namespace lcrwmd::python
