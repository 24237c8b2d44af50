// A writer that reaches up into the session: the layer check must name this include.
#include "core/fine.h"
#include "gpuidle/report.h"
#include "report/writer.h"
#include "session/session.h"
