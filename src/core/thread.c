/* thread: see rampart/thread.h. */
#include "rampart/thread.h"

#include <string.h>

error_code thread_start(thread_ctl *t, void *(*fn)(void *), void *arg, const char *what,
                        error_info *err)
{
    int rc = pthread_create(&t->id, NULL, fn, arg);
    if (rc != 0)
        return error_set(err, ERROR_IO, "cannot start %s: %s", what, strerror(rc));
    t->running = true;
    return ERROR_OK;
}

void thread_stop(thread_ctl *t, pthread_mutex_t *lock, pthread_cond_t *wake)
{
    if (!t->running)
        return;
    pthread_mutex_lock(lock);
    t->stop = true;
    pthread_cond_signal(wake);
    pthread_mutex_unlock(lock);
    pthread_join(t->id, NULL);
    t->running = false;
}

struct timespec thread_deadline(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}
