// make_zoo DIR: writes the model zoo (see tools/make_zoo.cc) into DIR.
// make_zoo --NAME FILE: writes the full-size architecture or kernel chain NAME with random weights
// (tools/zoo_fullsize.cc; `make_zoo --list` names the architectures, the usage all of them), e.g.
// make_zoo --resnet50 resnet50.onnx.
#include <exception>
#include <iostream>
#include <string>

#include "zoo_builder.h"

namespace {

int usage() {
  std::cerr << "usage: make_zoo OUTPUT_DIR | make_zoo --NAME FILE | make_zoo --list\n"
               "NAME, a full-size architecture or a kernel chain with random weights:\n";
  for (const auto& m : tessel::tools::full_size_models())
    std::cerr << "  " << m.name << ": " << m.description << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string flag = argc >= 2 ? argv[1] : "";
  if (argc == 2 && flag == "--list") {
    for (const auto& m : tessel::tools::full_size_models())
      if (!m.kernel_chain) std::cout << m.name << "\n";
    return 0;
  }
  const tessel::tools::FullSizeModel* model =
      argc == 3 && flag.starts_with("--") ? tessel::tools::find_full_size_model(flag.substr(2))
                                          : nullptr;
  if (argc == 2 ? flag.starts_with("-") : model == nullptr) return usage();
  try {
    if (model != nullptr) {
      model->write(argv[2]);
    } else {
      tessel::tools::make_zoo(argv[1]);
    }
  } catch (const std::exception& e) {
    std::cerr << "make_zoo: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
