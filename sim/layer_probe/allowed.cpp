// Must compile: the same probe built as the bson layer, including only a bson header (the
// control that shows the probe's build works at all).
#include "bson/value.h"

int layer_probe_allowed() {
  return 0;
}
