#include "codegen/llvm/codegen_cpu.h"

#include <fmt/format.h>
#include <llvm/IR/MDBuilder.h>

#include <optional>
#include <string_view>

#include "runtime/c_runtime_api.h"
#include "runtime/ndarray.h"

namespace tessel::codegen {
namespace {

constexpr int kMessageBytes = 1024;

// Text placed in a printf format must not contain conversions.
std::string escape_percent(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

// Field indices of DLTensor as laid out by dlpack.h (DLDevice and DLDataType flattened).
enum DLTensorField : unsigned {
  kData = 0,
  kDeviceType = 1,
  kDeviceId = 2,
  kNdim = 3,
  kDtypeCode = 4,
  kDtypeBits = 5,
  kDtypeLanes = 6,
  kShape = 7,
  kStrides = 8,
  kByteOffset = 9,
};

}  // namespace

CodeGenCPU::CodeGenCPU(llvm::Module& module, const Target& target, RuntimeLinkage linkage,
                       ArgNames arg_names)
    : CodeGenLLVM(module, target), linkage_(linkage), arg_names_(arg_names) {
  auto* ptr = builder_.getPtrTy();
  auto* i32 = builder_.getInt32Ty();
  dltensor_type_ =
      llvm::StructType::get(ctx_, {ptr, i32, i32, i32, builder_.getInt8Ty(), builder_.getInt8Ty(),
                                   builder_.getInt16Ty(), ptr, ptr, builder_.getInt64Ty()});
}

// ---------------- the entry point ----------------

void CodeGenCPU::add_function(const PrimFunc& func) {
  func_ = func;
  num_parallel_ = 0;
  const std::string& name = func->name;
  if (module_.getFunction(name) != nullptr) {
    throw Error(fmt::format("build: two functions are named '{}'", name));
  }
  auto* i32 = builder_.getInt32Ty();
  auto* ptr = builder_.getPtrTy();
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr, ptr, i32}, false),
                                    llvm::GlobalValue::ExternalLinkage, name, module_);
  set_target_attributes(fn);
  function_ = fn;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  llvm::Value* args = fn->getArg(0);
  llvm::Value* type_codes = fn->getArg(1);
  llvm::Value* num_args = fn->getArg(2);
  args->setName("args");
  type_codes->setName("type_codes");
  num_args->setName("num_args");

  int n = static_cast<int>(func->params.size());
  check_or_fail(builder_.CreateICmpEQ(num_args, const_i32(n)),
                fmt::format("expects {} arguments, got %d", n), {num_args});
  std::vector<std::optional<TensorArg>> tensors(n);
  for (int i = 0; i < n; ++i) {
    llvm::Value* code =
        builder_.CreateLoad(i32, builder_.CreateConstInBoundsGEP1_32(i32, type_codes, i));
    llvm::Value* packed = builder_.CreateConstInBoundsGEP1_32(builder_.getInt64Ty(), args, i);
    if (func->buffers[i].defined()) {
      check_or_fail(builder_.CreateICmpEQ(code, const_i32(kTesselArgDLTensor)),
                    describe_arg(i) + " expects a tensor, got type code %d", {code});
      tensors[i] = unpack_tensor(i, builder_.CreateLoad(ptr, packed));
    } else {
      unpack_scalar(i, packed, code);
    }
  }
  // Symbolic dims are bound at their first sight over all arguments, then every dim is checked.
  for (int i = 0; i < n; ++i) {
    if (tensors[i]) bind_shape_vars(i, *tensors[i]);
  }
  for (int i = 0; i < n; ++i) {
    if (!tensors[i]) continue;
    check_shape(i, *tensors[i]);
    check_compact_strides(i, *tensors[i]);
  }

  std::vector<Var> captures = free_vars(func->body);
  llvm::Function* compute = nullptr;
  with_task_state(false, [&] {
    compute = emit_function(name + "_compute", {}, captures,
                            [&](llvm::Function*) { emit_stmt(func->body); });
  });
  std::vector<llvm::Value*> values;
  for (const Var& v : captures) values.push_back(emit_expr(v));
  builder_.CreateRet(builder_.CreateCall(compute, values));
  unbind_all();
}

std::string CodeGenCPU::describe_arg(int index) const {
  if (arg_names_ == ArgNames::kPositional) return fmt::format("argument {}", index);
  const Buffer& buffer = func_->buffers[index];
  const std::string& arg_name = buffer.defined() ? buffer->name : func_->params[index]->name_hint;
  return escape_percent(fmt::format("argument {} ({})", index, arg_name));
}

CodeGenCPU::TensorArg CodeGenCPU::unpack_tensor(int index, llvm::Value* handle) {
  const Buffer& buffer = func_->buffers[index];
  std::string what = describe_arg(index);
  auto field = [&](unsigned f) {
    return builder_.CreateLoad(dltensor_type_->getElementType(f),
                               builder_.CreateStructGEP(dltensor_type_, handle, f));
  };
  check_or_fail(builder_.CreateIsNotNull(handle), what + " is a null tensor");
  llvm::Value* ndim = field(kNdim);
  check_or_fail(builder_.CreateICmpEQ(ndim, const_i32(buffer.ndim())),
                what + fmt::format(" has %d dimensions, expects {}", buffer.ndim()), {ndim});
  llvm::Value* device = field(kDeviceType);
  check_or_fail(builder_.CreateICmpEQ(device, const_i32(kDLCPU)),
                what + fmt::format(" is on device type %d, expects CPU ({})", int(kDLCPU)),
                {device});

  DLDataType expected = runtime::to_dl(buffer->dtype);
  llvm::Value* code = field(kDtypeCode);
  llvm::Value* bits = field(kDtypeBits);
  llvm::Value* lanes = field(kDtypeLanes);
  llvm::Value* dtype_ok = builder_.CreateAnd(
      builder_.CreateAnd(builder_.CreateICmpEQ(code, builder_.getInt8(expected.code)),
                         builder_.CreateICmpEQ(bits, builder_.getInt8(expected.bits))),
      builder_.CreateICmpEQ(lanes, builder_.getInt16(expected.lanes)));
  // The received type's name, for the message.
  llvm::Value* code_name = builder_.CreateGlobalString("type");
  for (auto [c, text] : {std::pair{kDLInt, "int"}, {kDLUInt, "uint"}, {kDLFloat, "float"}}) {
    code_name = builder_.CreateSelect(builder_.CreateICmpEQ(code, builder_.getInt8(c)),
                                      builder_.CreateGlobalString(text), code_name);
  }
  check_or_fail(dtype_ok, what + " has dtype %s%d, expects " + buffer->dtype.str(),
                {code_name, builder_.CreateZExt(bits, builder_.getInt32Ty())});

  llvm::Value* data =
      builder_.CreateInBoundsGEP(builder_.getInt8Ty(), field(kData), field(kByteOffset));
  llvm::Value* misalignment = builder_.CreateAnd(
      builder_.CreatePtrToInt(data, builder_.getInt64Ty()), const_i64(kBufferAlign - 1));
  check_or_fail(builder_.CreateICmpEQ(misalignment, const_i64(0)),
                what + fmt::format(" has data that is not {}-byte aligned", int(kBufferAlign)));
  bind(func_->params[index], data);

  TensorArg tensor{field(kStrides), {}};
  llvm::Value* shape = field(kShape);
  for (int d = 0; d < buffer.ndim(); ++d) {
    tensor.dims.push_back(
        builder_.CreateLoad(builder_.getInt64Ty(),
                            builder_.CreateConstInBoundsGEP1_32(builder_.getInt64Ty(), shape, d)));
  }
  return tensor;
}

void CodeGenCPU::unpack_scalar(int index, llvm::Value* packed, llvm::Value* code) {
  const Var& var = func_->params[index];
  bool is_float = var.dtype().is_float();
  TESSEL_ICHECK(var.dtype().is_scalar() && (is_float || var.dtype().is_integer()))
      << "scalar parameter " << var->name_hint << " of type " << var.dtype().str();
  check_or_fail(builder_.CreateICmpEQ(code, const_i32(is_float ? kTesselArgFloat : kTesselArgInt)),
                describe_arg(index) + (is_float ? " expects a float" : " expects an integer") +
                    ", got type code %d",
                {code});
  DataType packed_type = is_float ? DataType::f64() : DataType::i64();
  llvm::Value* raw = builder_.CreateLoad(llvm_type(packed_type), packed);
  bind(var, cast_value(packed_type, var.dtype(), raw));
}

void CodeGenCPU::bind_shape_vars(int index, const TensorArg& tensor) {
  const Buffer& buffer = func_->buffers[index];
  for (int d = 0; d < buffer.ndim(); ++d) {
    const auto* node = buffer->shape[d].as<VarNode>();
    if (node == nullptr) continue;
    Var var{Ref<VarNode>(node)};
    if (is_bound(var)) continue;
    bind(var, cast_value(DataType::i64(), var.dtype(), tensor.dims[d]));
    mark_non_negative(var);
  }
}

void CodeGenCPU::check_shape(int index, const TensorArg& tensor) {
  const Buffer& buffer = func_->buffers[index];
  if (buffer.ndim() == 0) return;
  // Binding dims are compared too: that catches a dim too large for its var's type.
  llvm::Value* ok = builder_.getTrue();
  std::vector<llvm::Value*> expected;
  for (int d = 0; d < buffer.ndim(); ++d) {
    expected.push_back(emit_i64(buffer->shape[d]));
    ok = builder_.CreateAnd(ok, builder_.CreateICmpEQ(tensor.dims[d], expected.back()));
  }
  std::vector<std::string> holes(buffer.ndim(), "%lld");
  std::string list = fmt::format("[{}]", fmt::join(holes, ", "));
  std::vector<llvm::Value*> values = tensor.dims;
  values.insert(values.end(), expected.begin(), expected.end());
  check_or_fail(ok, describe_arg(index) + " has shape " + list + " but expects " + list, values);
}

void CodeGenCPU::check_compact_strides(int index, const TensorArg& tensor) {
  auto* check_bb = llvm::BasicBlock::Create(ctx_, "strides.check", function_);
  auto* done_bb = llvm::BasicBlock::Create(ctx_, "strides.done", function_);
  builder_.CreateCondBr(builder_.CreateIsNull(tensor.strides), done_bb, check_bb);
  builder_.SetInsertPoint(check_bb);
  // Row-major: stride[d] is the product of the later dims; size-1 dims may have any stride.
  llvm::Value* ok = builder_.getTrue();
  llvm::Value* expected = const_i64(1);
  for (int d = static_cast<int>(tensor.dims.size()) - 1; d >= 0; --d) {
    llvm::Value* stride = builder_.CreateLoad(
        builder_.getInt64Ty(),
        builder_.CreateConstInBoundsGEP1_32(builder_.getInt64Ty(), tensor.strides, d));
    llvm::Value* dim_ok = builder_.CreateOr(builder_.CreateICmpEQ(tensor.dims[d], const_i64(1)),
                                            builder_.CreateICmpEQ(stride, expected));
    ok = builder_.CreateAnd(ok, dim_ok);
    expected = builder_.CreateMul(expected, tensor.dims[d]);
  }
  check_or_fail(ok, describe_arg(index) + " has non-compact strides; expects row-major layout");
  builder_.CreateBr(done_bb);
  builder_.SetInsertPoint(done_bb);
}

// ---------------- statements needing the runtime ----------------

void CodeGenCPU::emit_parallel_for(const ForNode* op) {
  if (in_parallel_) return emit_serial_for(op, {});
  DataType t = op->loop_var.dtype();
  llvm::Type* ty = llvm_type(t);
  llvm::Value* begin = cast_value(op->min.dtype(), t, emit_expr(op->min));
  llvm::Value* extent = cast_value(op->extent.dtype(), t, emit_expr(op->extent));
  std::vector<Var> captures = free_vars(op->body);
  std::string base = fmt::format("{}_parallel{}", func_->name, num_parallel_++);

  // The body runs iterations [begin, end) with noalias buffer pointers.
  bool non_negative = is_non_negative(op->min);
  llvm::Function* body = nullptr;
  with_task_state(true, [&] {
    body = emit_function(base + "_body", {ty, ty}, captures, [&](llvm::Function* fn) {
      emit_loop(op->loop_var, fn->getArg(0), fn->getArg(1), non_negative, op->body, {});
    });
  });

  // The closure: loop bounds and captured values, on the launching function's stack.
  std::vector<llvm::Value*> values{begin, extent};
  for (const Var& v : captures) values.push_back(emit_expr(v));
  std::vector<llvm::Type*> fields;
  for (llvm::Value* v : values) fields.push_back(v->getType());
  auto* closure_type = llvm::StructType::get(ctx_, fields);
  llvm::AllocaInst* closure = entry_alloca(
      closure_type, nullptr, module_.getDataLayout().getPrefTypeAlign(closure_type).value());
  for (size_t k = 0; k < values.size(); ++k) {
    builder_.CreateStore(values[k], builder_.CreateStructGEP(closure_type, closure, k));
  }

  // The task: int32_t(task_id, num_tasks, closure) runs the task_id-th of num_tasks chunks, which
  // differ by one iteration at most (in 64 bits: n x task_id may not fit the loop's type).
  auto* i32 = builder_.getInt32Ty();
  auto* i64 = builder_.getInt64Ty();
  auto* task =
      llvm::Function::Create(llvm::FunctionType::get(i32, {i32, i32, builder_.getPtrTy()}, false),
                             llvm::GlobalValue::InternalLinkage, base, module_);
  set_target_attributes(task);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", task));
  std::vector<llvm::Value*> loaded;
  for (size_t k = 0; k < fields.size(); ++k) {
    loaded.push_back(b.CreateLoad(fields[k], b.CreateStructGEP(closure_type, task->getArg(2), k)));
  }
  llvm::Value* task_id = b.CreateSExt(task->getArg(0), i64);
  llvm::Value* num_tasks = b.CreateSExt(task->getArg(1), i64);
  llvm::Value* n = b.CreateSExtOrTrunc(loaded[1], i64);
  auto bound = [&](llvm::Value* id) {
    return b.CreateSExtOrTrunc(b.CreateSDiv(b.CreateMul(n, id), num_tasks), ty);
  };
  llvm::Value* lo = bound(task_id);
  llvm::Value* hi = bound(b.CreateAdd(task_id, llvm::ConstantInt::get(i64, 1)));
  std::vector<llvm::Value*> call_args{b.CreateAdd(loaded[0], lo), b.CreateAdd(loaded[0], hi)};
  call_args.insert(call_args.end(), loaded.begin() + 2, loaded.end());
  b.CreateRet(b.CreateCall(body, call_args));

  // kTasksPerThread chunks per pool thread, one on one thread, no more than the iterations: the
  // pool runs each thread's share in order and lets a thread that finishes early take what is
  // left of another's.
  llvm::Value* threads = builder_.CreateSExt(
      builder_.CreateCall(runtime_function("TesselBackendNumThreads", i32, {}), {}), i64);
  llvm::Value* wanted = builder_.CreateSelect(
      builder_.CreateICmpSGT(threads, llvm::ConstantInt::get(i64, 1)),
      builder_.CreateMul(threads, llvm::ConstantInt::get(i64, kTasksPerThread)),
      llvm::ConstantInt::get(i64, 1));
  llvm::Value* chunks = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, wanted,
                                                       builder_.CreateSExtOrTrunc(extent, i64));
  llvm::Value* num_tasks_arg = builder_.CreateTrunc(
      builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, chunks, llvm::ConstantInt::get(i64, 1)),
      i32);
  llvm::FunctionCallee launch = runtime_function("TesselBackendParallelLaunch", i32,
                                                 {builder_.getPtrTy(), builder_.getPtrTy(), i32});
  llvm::Value* rc = builder_.CreateCall(launch, {task, closure, num_tasks_arg});
  // A failing task has set the message already; pass its code on.
  emit_unless(builder_.CreateICmpEQ(rc, const_i32(0)), [&] { emit_return(rc); });
}

void CodeGenCPU::emit_allocate(const AllocateNode* op) {
  const Buffer& buffer = op->buffer;
  llvm::Type* elem = memory_type(buffer->dtype.element_of());
  int64_t elem_bytes = buffer->dtype.bytes();
  std::optional<int64_t> count = 1;
  for (const PrimExpr& dim : buffer->shape) {
    const int64_t* c = as_const_int(dim);
    count = count && c ? std::optional<int64_t>(*count * *c) : std::nullopt;
  }
  bool on_stack = count && *count * elem_bytes <= kMaxStackBytes;
  llvm::Value* ptr = nullptr;
  if (on_stack) {
    ptr = entry_alloca(elem, const_i64(*count), kBufferAlign);
  } else {
    llvm::Value* nbytes = const_i64(elem_bytes);
    for (const PrimExpr& dim : buffer->shape) nbytes = builder_.CreateNSWMul(nbytes, emit_i64(dim));
    ptr = builder_.CreateCall(runtime_function("TesselBackendAllocWorkspace", builder_.getPtrTy(),
                                               {builder_.getInt64Ty()}),
                              {nbytes});
    check_or_fail(builder_.CreateIsNotNull(ptr),
                  "cannot allocate %lld bytes for buffer " + escape_percent(buffer->name),
                  {nbytes});
    live_workspaces_.push_back(ptr);
  }
  bind(buffer->data, ptr);
  emit_stmt(op->body);
  unbind(buffer->data);
  if (!on_stack) {
    live_workspaces_.pop_back();
    builder_.CreateCall(free_workspace(), {ptr});
  }
}

void CodeGenCPU::emit_assert(const AssertStmtNode* op) {
  TESSEL_ICHECK(op->condition.dtype().is_scalar()) << "vector assert condition";
  check_or_fail(emit_expr(op->condition), escape_percent(op->message));
  emit_stmt(op->body);
}

// ---------------- errors and runtime calls ----------------

void CodeGenCPU::emit_unless(llvm::Value* ok, const std::function<void()>& on_failure) {
  auto* fail = llvm::BasicBlock::Create(ctx_, "fail", function_);
  auto* cont = llvm::BasicBlock::Create(ctx_, "ok", function_);
  builder_.CreateCondBr(ok, cont, fail, llvm::MDBuilder(ctx_).createLikelyBranchWeights());
  builder_.SetInsertPoint(fail);
  on_failure();
  builder_.SetInsertPoint(cont);
}

void CodeGenCPU::check_or_fail(llvm::Value* ok, const std::string& format,
                               const std::vector<llvm::Value*>& args) {
  emit_unless(ok, [&] {
    llvm::Value*& message = message_buffers_[function_];
    if (message == nullptr)
      message = entry_alloca(builder_.getInt8Ty(), const_i32(kMessageBytes), 1);
    std::vector<llvm::Value*> call_args{message, const_i64(kMessageBytes),
                                        builder_.CreateGlobalString(format)};
    call_args.insert(call_args.end(), args.begin(), args.end());
    auto* i32 = builder_.getInt32Ty();
    auto* ptr = builder_.getPtrTy();
    builder_.CreateCall(runtime_function("snprintf", i32, {ptr, builder_.getInt64Ty(), ptr}, true),
                        call_args);
    builder_.CreateCall(runtime_function("TesselSetLastError", builder_.getVoidTy(), {ptr}),
                        {message});
    emit_return(const_i32(-1));
  });
}

void CodeGenCPU::emit_return(llvm::Value* code) {
  for (auto it = live_workspaces_.rbegin(); it != live_workspaces_.rend(); ++it) {
    builder_.CreateCall(free_workspace(), {*it});
  }
  builder_.CreateRet(code);
}

llvm::FunctionCallee CodeGenCPU::free_workspace() {
  return runtime_function("TesselBackendFreeWorkspace", builder_.getVoidTy(),
                          {builder_.getPtrTy()});
}

llvm::FunctionCallee CodeGenCPU::runtime_function(const char* name, llvm::Type* result,
                                                  std::vector<llvm::Type*> params, bool vararg) {
  llvm::FunctionType* type = llvm::FunctionType::get(result, params, vararg);
  bool runtime_api = std::string_view(name).starts_with("Tessel");
  if (linkage_ == RuntimeLinkage::kSymbols || !runtime_api)
    return module_.getOrInsertFunction(name, type);
  std::string slot = std::string(TESSEL_RUNTIME_POINTER_PREFIX) + name;
  llvm::GlobalVariable* pointer = module_.getGlobalVariable(slot);
  if (pointer == nullptr) {
    pointer = new llvm::GlobalVariable(module_, builder_.getPtrTy(), false,
                                       llvm::GlobalValue::WeakAnyLinkage,
                                       llvm::ConstantPointerNull::get(builder_.getPtrTy()), slot);
  }
  return {type, builder_.CreateLoad(builder_.getPtrTy(), pointer, std::string(name) + "_ptr")};
}

void CodeGenCPU::with_task_state(bool in_parallel, const std::function<void()>& emit) {
  bool saved_in_parallel = std::exchange(in_parallel_, in_parallel);
  auto saved_workspaces = std::exchange(live_workspaces_, {});
  emit();
  in_parallel_ = saved_in_parallel;
  live_workspaces_ = std::move(saved_workspaces);
}

}  // namespace tessel::codegen
