// The parallel layer: CPU thread pools and parallel_for. Standard library
// and core only.
//
//   broadcast_pool       thread_pool<scheduling::uniform>: one block per thread
//   work_stealing_pool   thread_pool<scheduling::adaptive>: Chase-Lev range stealing
//   default_pool()       the process-wide work_stealing_pool (SWITCHYARD_NUM_THREADS)
//   team_pool            parallel_for on threads another runtime owns (PyTorch's)
//   parallel_for(...)    on this thread's team, else the default pool
#pragma once

#include "switchyard/parallel/broadcast_pool.h"
#include "switchyard/parallel/chase_lev_deque.h"
#include "switchyard/parallel/default_pool.h"
#include "switchyard/parallel/parallel_for.h"
#include "switchyard/parallel/parallel_hint.h"
#include "switchyard/parallel/parker.h"
#include "switchyard/parallel/team_pool.h"
#include "switchyard/parallel/thread_pool.h"
#include "switchyard/parallel/work_stealing_pool.h"
