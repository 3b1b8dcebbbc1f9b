// Moved to tests/common/expect_error.h; this forward keeps suites that include the old path
// building.
#pragma once

#include "tests/common/expect_error.h"
