# SPDX-License-Identifier: GPL-2.0
# The engine (KJIT_ENGINE_SOURCES: core/*.cc, arch/x86/*.cc) compiled a second
# time with the Linux kernel's code-generation flags, prelinked into one
# relocatable object that os/linux/build.sh links into kjit.ko:
#
#   ${CMAKE_BINARY_DIR}/kernel-objs/kjit_engine_kernel.o
#
# After the `ld -r`, cmake/check-freestanding.sh rejects the object if it needs
# anything the module cannot provide (undefined symbols outside the shim, Zydis,
# mem* and the kernel's thunks) or carries a C++ runtime dependency (global
# constructors, __cxa_*, unwinder, operator new, stack protector).
#
# Inputs from the top-level CMakeLists.txt: KJIT_ENGINE_SOURCES, KJIT_KERNEL_ABI.
# Options: KJIT_KERNEL_OBJECTS (ON) builds it as part of ALL;
#          KJIT_KERNEL_CXX (g++) is the compiler: the kernel is built by GCC, and
#          the thunk flags (os/linux/kernel-codegen.flags) are GCC spellings.

option(KJIT_KERNEL_OBJECTS "Build the kernel-flag engine object (kjit_engine_kernel.o)" ON)
set(KJIT_KERNEL_CXX "g++" CACHE STRING "C++ compiler for the kernel-flag engine build (GCC)")
set(KJIT_KERNEL_LD "ld" CACHE STRING "Linker for the kernel-flag engine prelink")

if(KJIT_KERNEL_OBJECTS)
  set(KJIT_KERNEL_OBJ_DIR ${CMAKE_BINARY_DIR}/kernel-objs)
  file(MAKE_DIRECTORY ${KJIT_KERNEL_OBJ_DIR})

  # The kernel's own code-generation flags, shared with Zydis's kernel
  # object (os/linux/build-zydis.sh), then C++'s own.
  set(KJIT_KERNEL_CODEGEN_FLAGS_FILE ${CMAKE_SOURCE_DIR}/os/linux/kernel-codegen.flags)
  file(STRINGS ${KJIT_KERNEL_CODEGEN_FLAGS_FILE} KJIT_KERNEL_CODEGEN_FLAGS REGEX "^[^#]")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${KJIT_KERNEL_CODEGEN_FLAGS_FILE})
  set(KJIT_KERNEL_CXX_FLAGS
      -std=c++20 ${KJIT_KERNEL_CODEGEN_FLAGS}
      -fno-exceptions -fno-rtti -nostdinc++ -fno-threadsafe-statics
      -O2 -g0 -Wall -Wno-unused-parameter
      -DKJIT_KERNEL=1 -DZYAN_NO_LIBC -DZYDIS_STATIC_BUILD -DZYCORE_STATIC_BUILD
      -DZYDIS_DISABLE_FORMATTER
      -I${CMAKE_SOURCE_DIR}/include -I${CMAKE_SOURCE_DIR})

  set(_kjit_kobjs)
  foreach(src ${KJIT_ENGINE_SOURCES})
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${src})
    string(REGEX REPLACE "[/\\.]" "_" stem "${rel}")
    set(obj ${KJIT_KERNEL_OBJ_DIR}/${stem}.o)
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${KJIT_KERNEL_CXX} ${KJIT_KERNEL_CXX_FLAGS} -MD -MF ${obj}.d -c ${src} -o ${obj}
      DEPENDS ${src} ${KJIT_KERNEL_CODEGEN_FLAGS_FILE}
      DEPFILE ${obj}.d
      COMMENT "Kernel-flag C++ ${rel}"
      VERBATIM)
    list(APPEND _kjit_kobjs ${obj})
  endforeach()

  set(KJIT_ENGINE_KERNEL_OBJ ${KJIT_KERNEL_OBJ_DIR}/kjit_engine_kernel.o)
  set(_kjit_check ${CMAKE_CURRENT_LIST_DIR}/check-freestanding.sh)
  if(_kjit_kobjs)
    add_custom_command(
      OUTPUT ${KJIT_ENGINE_KERNEL_OBJ}
      COMMAND ${KJIT_KERNEL_LD} -r -o ${KJIT_ENGINE_KERNEL_OBJ}.tmp ${_kjit_kobjs}
      COMMAND ${_kjit_check} ${KJIT_ENGINE_KERNEL_OBJ}.tmp
      COMMAND ${CMAKE_COMMAND} -E rename ${KJIT_ENGINE_KERNEL_OBJ}.tmp ${KJIT_ENGINE_KERNEL_OBJ}
      DEPENDS ${_kjit_kobjs} ${_kjit_check}
      COMMENT "Prelink + freestanding check: kernel-objs/kjit_engine_kernel.o (ABI ${KJIT_KERNEL_ABI})"
      VERBATIM)
    add_custom_target(kjit_engine_kernel ALL DEPENDS ${KJIT_ENGINE_KERNEL_OBJ})
    add_test(NAME kernel_engine_freestanding
             COMMAND ${_kjit_check} ${KJIT_ENGINE_KERNEL_OBJ})
  else()
    message(STATUS "kjit: no engine sources yet, kjit_engine_kernel target is empty")
    add_custom_target(kjit_engine_kernel ALL)
  endif()
endif()
