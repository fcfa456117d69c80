// Bounds on what a case may ask of a runner, shared by the runner's bindings (which refuse
// an input beyond them) and the adapters' specs (wire/adapter_spec.cpp, which refuse the
// fixture first): one number each, so the two cannot disagree.
#pragma once

namespace course {

inline constexpr int kMaxPlanBlocks = 4096;  // a paged plan's pool of one-layer blocks (48 KB each)
inline constexpr int kMaxModelBlocks = 256;  // a GPT-2 pool of twelve-layer blocks (1.2 MB each)
inline constexpr int kMaxRequests = 64;      // prompts or requests in one case
inline constexpr int kMaxNewTokens = 256;    // a request's token budget
inline constexpr int kMaxArrival = 1000;     // the latest step a request may arrive at
inline constexpr int kMaxBudget = 4096;      // a chunked server's rows per step

}  // namespace course
