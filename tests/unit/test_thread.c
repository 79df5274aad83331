/* thread: a started thread stops when told and is joined; stopping one that
 * never started does nothing; a deadline is "ms from now", normalised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <time.h>

#include "rampart/thread.h"

typedef struct sleeper {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    thread_ctl ctl;
    bool ended;
} sleeper;

/* Waits with no deadline: only thread_stop's signal can end it. */
static void *sleep_until_stopped(void *arg)
{
    sleeper *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->ctl.stop)
        pthread_cond_wait(&s->wake, &s->lock);
    s->ended = true;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void test_stop_wakes_and_joins(void **state)
{
    (void)state;
    sleeper s = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};
    error_info err = {0};
    assert_int_equal(thread_start(&s.ctl, sleep_until_stopped, &s, "the sleeper", &err),
                     ERROR_OK);
    assert_true(s.ctl.running);
    thread_stop(&s.ctl, &s.lock, &s.wake);
    assert_true(s.ended); /* joined: the thread ran to its end before stop returned */
    assert_false(s.ctl.running);
    thread_stop(&s.ctl, &s.lock, &s.wake); /* twice: nothing left to stop */
}

static void test_stop_without_start(void **state)
{
    (void)state;
    sleeper s = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};
    thread_stop(&s.ctl, &s.lock, &s.wake);
    assert_false(s.ctl.stop); /* never started: not even the flag is touched */
    assert_false(s.ctl.running);
}

static double seconds(struct timespec ts) { return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9; }

static void test_deadline(void **state)
{
    (void)state;
    long cases[] = {0, 1, 50, 999, 1000, 1001, 2500};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        struct timespec d = thread_deadline(cases[i]);
        clock_gettime(CLOCK_MONOTONIC, &after);
        assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
        double want = (double)cases[i] / 1e3;
        assert_true(seconds(d) >= seconds(before) + want - 1e-9);
        assert_true(seconds(d) <= seconds(after) + want + 1e-9);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_wakes_and_joins),
        cmocka_unit_test(test_stop_without_start),
        cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
