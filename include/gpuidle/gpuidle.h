// All of gpuidle's public API in one include: offline analysis (analyze.h), live profiling and
// markers (profiler.h), the report (report.h), options (options.h), settings by name
// (settings.h), the command line (cli.h) and the version (version.h).
#ifndef GPUIDLE_INCLUDE_GPUIDLE_GPUIDLE_H_
#define GPUIDLE_INCLUDE_GPUIDLE_GPUIDLE_H_

#include "gpuidle/analyze.h"
#include "gpuidle/cli.h"
#include "gpuidle/export.h"
#include "gpuidle/options.h"
#include "gpuidle/profiler.h"
#include "gpuidle/report.h"
#include "gpuidle/settings.h"
#include "gpuidle/version.h"

#endif  // GPUIDLE_INCLUDE_GPUIDLE_GPUIDLE_H_
