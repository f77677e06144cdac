/* The exit status of a GPU suite whose every test skipped itself, which its
 * CTest entry names as SKIP_RETURN_CODE (skipped_main.c). */
#ifndef RIG_TESTS_SKIPPED_MAIN_H
#define RIG_TESTS_SKIPPED_MAIN_H

#define SKIPPED_EXIT 77

#endif
