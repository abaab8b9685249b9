// The wizards' second CUDA extension: cuda/invalid-device-function's kernels (built by
// _extkit.py for this GPU then sm_80 only). Kept apart from ext_kernels.cu because a plain build
// for sm_90 alone cannot link this file: nvcc takes the host stubs from its last device pass.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

// A kernel meant for pre-Hopper GPUs whose definition AND launch sit under the same __CUDA_ARCH__
// test (the pattern of pytorch/pytorch#177014's int4mm.cu and deepspeedai/DeepSpeed#7863). The
// host pass (__CUDA_ARCH__ undefined) keeps both, so the host code launches the kernel; the sm_90
// device pass drops both, so it compiles and the binary has no sm_90 code for the kernel.
#if !defined(__CUDA_ARCH__) || (__CUDA_ARCH__ < 900)
__global__ void pre_hopper_fill(float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.0f;
}
#endif

// The fix: the kernel exists for every architecture; __CUDA_ARCH__ only picks code inside it.
__global__ void any_arch_fill(float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  if (i < n) y[i] = 1.0f;  // the Hopper path
#else
  if (i < n) y[i] = 1.0f;  // the older path
#endif
}

torch::Tensor guarded(torch::Tensor x, bool guard_in_body) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "x must be contiguous float32");
  auto y = torch::zeros_like(x);
  int64_t n = x.numel();
  auto stream = c10::cuda::getCurrentCUDAStream();
  unsigned blocks = (unsigned)((n + 255) / 256);
  if (guard_in_body) {
    any_arch_fill<<<blocks, 256, 0, stream>>>(y.data_ptr<float>(), n);
  } else {
#if !defined(__CUDA_ARCH__) || (__CUDA_ARCH__ < 900)
    pre_hopper_fill<<<blocks, 256, 0, stream>>>(y.data_ptr<float>(), n);
#endif
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
