// Symbol visibility: libgpuidle.so exports only the public API (everything else is hidden, so
// gpuidle's internals cannot clash with the libraries of the process it is loaded into).
#ifndef GPUIDLE_INCLUDE_GPUIDLE_EXPORT_H_
#define GPUIDLE_INCLUDE_GPUIDLE_EXPORT_H_

#define GPUIDLE_EXPORT __attribute__((visibility("default")))

#endif  // GPUIDLE_INCLUDE_GPUIDLE_EXPORT_H_
