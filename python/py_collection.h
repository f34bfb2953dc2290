#pragma once
// lcrwmd.Collection's native class (py_collection.cpp).
#include <pybind11/pybind11.h>

namespace lcrwmd::python {

void bind_collection(pybind11::module_& m);

}  // namespace lcrwmd::python
