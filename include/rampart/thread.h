/*
 * thread: a helper thread its owner starts once and stops once (the agent's
 * indexer and fetch recorder, the connection watchdog).
 *
 * - The thread waits on a condition variable of the owner's under the owner's
 *   mutex, and reads `stop` under that mutex: when it is set, it returns.
 * - thread_stop sets `stop`, wakes the thread and returns once it has ended; for
 *   a thread that never started it does nothing.
 * - thread_deadline is "ms from now" for pthread_cond_timedwait on a condition
 *   variable set to CLOCK_MONOTONIC.
 */
#ifndef RAMPART_THREAD_H
#define RAMPART_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "rampart/error.h"

typedef struct thread_ctl {
    pthread_t id;
    bool stop;    /* under the owner's mutex: the thread should return */
    bool running; /* started and not yet joined */
} thread_ctl;

/* Run fn(arg) on a new thread; ERROR_IO "cannot start WHAT: why" when it cannot. */
error_code thread_start(thread_ctl *t, void *(*fn)(void *), void *arg, const char *what,
                        error_info *err);

/* Set t->stop under `lock`, signal `wake` and wait until the thread has ended. */
void thread_stop(thread_ctl *t, pthread_mutex_t *lock, pthread_cond_t *wake);

/* CLOCK_MONOTONIC now plus `ms`. */
struct timespec thread_deadline(long ms);

#endif
