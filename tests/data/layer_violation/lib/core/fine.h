// Includes only the public headers: allowed in every layer.
#include "gpuidle/report.h"
