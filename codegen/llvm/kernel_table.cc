#include "codegen/llvm/kernel_table.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>

#include "runtime/c_runtime_api.h"

namespace tessel::codegen {

void add_kernel_table(llvm::Module& module,
                      const std::vector<std::pair<std::string, std::string>>& entries) {
  llvm::LLVMContext& ctx = module.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  auto* entry_type = llvm::StructType::get(ctx, {ptr, ptr});
  auto* entry_fn_type = llvm::FunctionType::get(i32, {ptr, ptr, i32}, false);
  std::vector<llvm::Constant*> rows;
  for (const auto& [name, symbol] : entries) {
    llvm::Constant* text = llvm::ConstantDataArray::getString(ctx, name);
    auto* name_var =
        new llvm::GlobalVariable(module, text->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                 text, name + ".kernel_name");
    name_var->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    llvm::Constant* entry =
        llvm::cast<llvm::Constant>(module.getOrInsertFunction(symbol, entry_fn_type).getCallee());
    rows.push_back(llvm::ConstantStruct::get(entry_type, {name_var, entry}));
  }
  auto* array_type = llvm::ArrayType::get(entry_type, rows.size());
  auto* kernels =
      new llvm::GlobalVariable(module, array_type, true, llvm::GlobalValue::PrivateLinkage,
                               llvm::ConstantArray::get(array_type, rows), "tessel.kernels");
  auto* table_type = llvm::StructType::get(ctx, {i32, i32, ptr});
  llvm::Constant* table = llvm::ConstantStruct::get(
      table_type, {llvm::ConstantInt::get(i32, TESSEL_KERNEL_TABLE_VERSION),
                   llvm::ConstantInt::get(i32, rows.size()), kernels});
  new llvm::GlobalVariable(module, table_type, true, llvm::GlobalValue::ExternalLinkage, table,
                           TESSEL_KERNEL_TABLE_SYMBOL);
}

}  // namespace tessel::codegen
