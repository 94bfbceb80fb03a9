// Factories for the built-in strategies (registry.cpp lists them in run order).
#pragma once
#include <memory>

#include "core/strategy.hpp"

namespace ab {

std::unique_ptr<Strategy> make_nested();
std::unique_ptr<Strategy> make_head_batched();
std::unique_ptr<Strategy> make_fully_batched();
std::unique_ptr<Strategy> make_ptr_array();
std::unique_ptr<Strategy> make_fused();

}  // namespace ab
