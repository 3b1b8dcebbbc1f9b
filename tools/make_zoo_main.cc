// make_zoo DIR: writes the model zoo (see tools/make_zoo.cc) into DIR.
// make_zoo --resnet50 FILE: writes ResNet-50 with random weights (for compile-time measurements).
#include <exception>
#include <iostream>
#include <string>

#include "zoo_builder.h"

int main(int argc, char** argv) {
  bool resnet50 = argc == 3 && std::string(argv[1]) == "--resnet50";
  if (argc != 2 && !resnet50) {
    std::cerr << "usage: make_zoo OUTPUT_DIR | make_zoo --resnet50 FILE\n";
    return 2;
  }
  try {
    if (resnet50) {
      tessel::tools::resnet50(argv[2]);
    } else {
      tessel::tools::make_zoo(argv[1]);
    }
  } catch (const std::exception& e) {
    std::cerr << "make_zoo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
