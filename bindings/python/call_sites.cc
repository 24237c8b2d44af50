// The Python call site of CUDA calls: gpuidle's call-site provider (gpuidle/profiler.h) for
// Python programs. While a profile runs, gpuidle calls it at the start of every sync and copy,
// and of one launch per millisecond of each thread; it names the innermost frame of the program's
// own code ("train.py:42 in train_step"), skipping frames of libraries (torch, site-packages, the
// standard library, gpuidle), so that `.item()` inside a training step, and `print(tensor)` deep
// inside torch's formatting, both point at the user's line.
//
// Cheap by construction: nothing unless the calling thread holds the GIL (autograd's backward
// threads and other native threads are skipped: no Python code is calling there); each code
// object is classified once; each (code object, instruction) is turned into a string once and
// the string lives for the process (the provider's contract). Both caches are guarded by the
// GIL, which the provider holds whenever it touches them.
#include <Python.h>
#include <frameobject.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuidle/profiler.h"

namespace gpuidle::python {
namespace {

namespace py = pybind11;

// Distinct call sites and classified code objects kept at most (a program generating code
// without end, such as torch.compile's, must not grow them without bound).
constexpr size_t kMaxSites = 200'000;
constexpr size_t kMaxCodeObjects = 100'000;

struct PairHash {
  size_t operator()(const std::pair<const void*, int>& p) const {
    return std::hash<const void*>()(p.first) * 31 + std::hash<int>()(p.second);
  }
};

struct Caches {
  std::vector<std::string> library_prefixes;
  // Code object -> true if it belongs to a library. The code objects are kept alive (one
  // reference each) so that an address is never reused for another code object.
  std::unordered_map<PyCodeObject*, bool> is_library;
  std::unordered_map<std::pair<const void*, int>, const std::string*, PairHash> sites;
};

Caches* caches = nullptr;  // created on first enable; lives as long as the process

// UTF-8 of a str without disturbing an exception the program may have pending.
const char* Utf8(PyObject* s) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  const char* utf8 = PyUnicode_AsUTF8(s);
  if (utf8 == nullptr) PyErr_Clear();
  PyErr_Restore(type, value, traceback);
  return utf8;
}

bool IsLibrary(PyCodeObject* code) {
  auto it = caches->is_library.find(code);
  if (it != caches->is_library.end()) return it->second;
  bool library = true;  // a file name we cannot read is not the user's line
  if (const char* file = Utf8(code->co_filename); file != nullptr) {
    const std::string name(file);
    library = name.empty() || name[0] == '<';  // <frozen ...>, <string>
    for (const std::string& prefix : caches->library_prefixes) {
      if (library) break;
      library = name.compare(0, prefix.size(), prefix) == 0;
    }
  }
  if (caches->is_library.size() < kMaxCodeObjects) {
    Py_INCREF(code);
    caches->is_library.emplace(code, library);
  }
  return library;
}

// True if this thread holds the GIL. PyGILState_Check() answers 1 whenever CPython switched
// the check off (once a subinterpreter exists): compare thread states instead.
bool HoldsGil() {
  PyThreadState* mine = PyGILState_GetThisThreadState();
#if PY_VERSION_HEX >= 0x030D0000
  return mine != nullptr && mine == PyThreadState_GetUnchecked();
#else
  return mine != nullptr && mine == _PyThreadState_UncheckedGet();
#endif
}

const std::string* SiteOf(PyFrameObject* frame, PyCodeObject* code) {
#if PY_VERSION_HEX >= 0x030B0000
  const int instruction = PyFrame_GetLasti(frame);
#else
  const int instruction = PyFrame_GetLineNumber(frame);
#endif
  const std::pair<const void*, int> key{code, instruction};
  if (auto it = caches->sites.find(key); it != caches->sites.end()) return it->second;
  if (caches->sites.size() >= kMaxSites) return nullptr;
  const char* file = Utf8(code->co_filename);
  const char* function = Utf8(code->co_name);
  if (file == nullptr || function == nullptr) return nullptr;
  auto* site = new std::string(file);  // never freed: the provider's strings live for good
  site->append(":").append(std::to_string(PyFrame_GetLineNumber(frame)));
  site->append(" in ").append(function);
  caches->sites.emplace(key, site);
  return site;
}

const char* PythonCallSite() {
  if (caches == nullptr || !Py_IsInitialized() || !HoldsGil()) return nullptr;
  const std::string* site = nullptr;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    if (!IsLibrary(code)) site = SiteOf(frame, code);
    Py_DECREF(code);
    if (site != nullptr) break;
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  return site != nullptr ? site->c_str() : nullptr;
}

}  // namespace

void DefineCallSites(py::module_& m) {
  m.def(
      "enable_call_sites",
      [](std::vector<std::string> library_prefixes) {
        if (caches == nullptr) caches = new Caches();
        if (caches->library_prefixes != library_prefixes) {
          // Classify again under the new prefixes (the old entries' references stay: tiny).
          caches->library_prefixes = std::move(library_prefixes);
          caches->is_library.clear();
        }
        gpuidle::SetCallSiteProvider(&PythonCallSite);
      },
      py::arg("library_prefixes"),
      "Names the Python line of each CUDA sync and copy, and of sampled launches, of "
      "collections started from now on; frames in files under library_prefixes are skipped.");
  m.def(
      "disable_call_sites", [] { gpuidle::SetCallSiteProvider(nullptr); },
      "Stops naming call sites (collections started from now on).");
  m.def(
      "call_site_here",
      []() -> py::object {
        const char* site = PythonCallSite();
        return site != nullptr ? py::object(py::str(site)) : py::object(py::none());
      },
      "The call site gpuidle would record for a CUDA call made here (for tests).");
}

}  // namespace gpuidle::python
