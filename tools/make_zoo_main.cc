// make_zoo DIR: writes the model zoo (see tools/make_zoo.cc) into DIR.
#include <exception>
#include <iostream>

#include "zoo_builder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_zoo OUTPUT_DIR\n";
    return 2;
  }
  try {
    tessel::tools::make_zoo(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "make_zoo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
