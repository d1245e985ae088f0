// tmakit/griddep.cuh -- programmatic dependent launch (PDL): overlap a kernel's start with the previous kernel's end.
// A kernel launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION may begin while the previous kernel in
// the stream is still running; it must wait before touching memory that kernel reads or writes. Both instructions
// are no-ops in a kernel launched without the attribute.
#pragma once
#include "types.cuh"

namespace tmakit {

// PTX: griddepcontrol.wait;   block until the prerequisite grids have completed and their memory is visible.
TMAKIT_DEVICE void griddep_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// PTX: griddepcontrol.launch_dependents;   this CTA no longer holds back the launch of the dependent grid.
TMAKIT_DEVICE void griddep_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

}  // namespace tmakit
