// Must NOT compile: the bson layer including a server header (a back-edge). The test
// sim.layers.back_edge_refused builds it and expects the include to be refused.
#include "server/server.h"

int layer_probe_back_edge() {
  return 0;
}
