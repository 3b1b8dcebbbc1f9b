// Replaces each If node by its branches' nodes. With a constant condition only the taken branch is
// inlined; otherwise both are, and each output becomes Where(condition, then, else), so the branch
// is chosen at run time (both branches run: they are side-effect free, and their outputs must have
// the same types, which type inference checks). Nested Ifs are inlined too. Branch values and nodes
// are renamed "<if node>/then/<name>" and "<if node>/else/<name>". The If node's outputs keep their
// value ids. Runs after type inference (which checks that the branches agree); new values carry the
// branches' declared types, so type inference must run again when it returns true (something
// changed).
#pragma once

#include "ir/graph.h"

namespace tessel::passes {

bool inline_if(graph::Graph& g);

}  // namespace tessel::passes
