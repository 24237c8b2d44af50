#include "ingest/json_scanners.h"

namespace gpuidle::internal::kineto {

// Out of line: most white space is none or one space, which SkipWhitespace handles inline;
// line breaks and indentation come here.
void SkipWhitespaceRun(ChunkedJsonStream& is) {
  for (;;) {
    const char* end = is.chunk_end();
    const char* p = FindNonSpace(is.cursor(), end);
    if (p == is.cursor()) return;
    is.SkipTo(p);  // at the end of the chunk, reads the next one
    if (p != end) return;
  }
}

}  // namespace gpuidle::internal::kineto
