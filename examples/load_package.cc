// Loads a package written by `tessel compile` and runs it once with zero inputs. This program links
// only the runtime library (no LLVM): a deployed model needs nothing more.
//   load_package model.tar
#include <iostream>

#include "ir/error.h"
#include "runtime/model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: load_package PACKAGE.tar\n";
    return 2;
  }
  try {
    tessel::runtime::Model m = tessel::runtime::load_package(argv[1]);
    for (int i = 0; i < m.num_inputs(); ++i) {
      tessel::runtime::NDArray x = m.executor().get_input(i).copy();
      std::fill_n(static_cast<char*>(x.raw_data()), x.nbytes(), 0);
      m.set_input(i, x);
    }
    m.run();
    for (int i = 0; i < m.num_outputs(); ++i) {
      tessel::runtime::NDArray y = m.get_output(i);
      std::cout << "output '" << m.output_name(i) << "': " << y.numel() << " elements of "
                << y.dtype().str() << "\n";
    }
  } catch (const tessel::Error& e) {
    std::cerr << "load_package: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
