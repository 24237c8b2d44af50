// Where gpuidle's Python layer lives, so that `gpuidle run` and LD_PRELOAD can load it into
// unchanged Python programs (docs/INJECTION.md, "Python programs"): the folder with gpuidle's
// sitecustomize.py, bindings/python/gpuidle/_site, put first on the program's PYTHONPATH.
#ifndef GPUIDLE_LIB_SETTINGS_PYTHON_SITE_H_
#define GPUIDLE_LIB_SETTINGS_PYTHON_SITE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// The _site folder of the Python package that belongs to the libgpuidle.so at library_path,
// or "" if there is none: next to the library (a pip-installed package holds its own copy) or,
// in a build tree, in <build>/python/gpuidle next to <build>/lib.
std::string PythonSiteDir(const std::string& library_path);

// A search path (PYTHONPATH) with dir first: an entry equal to dir is moved to the front, the
// others keep their order; empty entries are kept (Python reads them as the current folder).
std::string PrependToSearchPath(absl::string_view path, absl::string_view dir);

// Whether GPUIDLE_PYTHON (or another boolean GPUIDLE_* value) says no: 0, false, no.
bool SaysNo(const char* value);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SETTINGS_PYTHON_SITE_H_
