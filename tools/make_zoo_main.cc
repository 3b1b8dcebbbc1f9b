// make_zoo DIR: writes the model zoo (see tools/make_zoo.cc) into DIR.
// make_zoo --resnet50 FILE | --densenet121 FILE: writes ResNet-50 or DenseNet-121 with random
// weights (for compile-time measurements).
#include <exception>
#include <iostream>
#include <string>

#include "zoo_builder.h"

int main(int argc, char** argv) {
  std::string flag = argc == 3 ? argv[1] : "";
  if (argc != 2 && flag != "--resnet50" && flag != "--densenet121") {
    std::cerr << "usage: make_zoo OUTPUT_DIR | make_zoo --resnet50 FILE | make_zoo --densenet121 "
                 "FILE\n";
    return 2;
  }
  try {
    if (flag == "--resnet50") {
      tessel::tools::resnet50(argv[2]);
    } else if (flag == "--densenet121") {
      tessel::tools::densenet121(argv[2]);
    } else {
      tessel::tools::make_zoo(argv[1]);
    }
  } catch (const std::exception& e) {
    std::cerr << "make_zoo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
