#pragma once
#include <cstdint>
#include <vector>
void test_shim_reset();
void test_shim_add_code(uint64_t addr, const std::vector<uint8_t> &bytes);
