// tmakit/all.cuh -- every tmakit device header.
#pragma once
#include "types.cuh"
#include "debug.cuh"
#include "fence.cuh"
#include "smem.cuh"
#include "mbarrier.cuh"
#include "cluster.cuh"
#include "tma.cuh"
#include "tensormap.cuh"
#include "griddep.cuh"
#include "fastdiv.cuh"
