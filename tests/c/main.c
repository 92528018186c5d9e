/* Runs one C ABI test by name: `acp_c_tests NAME` (ctest passes it);
 * `acp_c_tests --list` prints every name. Exit 0 = pass. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

#define ACP_TEST(name) void test_##name(void);
#include "tests.def"
#undef ACP_TEST

static const struct {
  const char *name;
  void (*run)(void);
} TESTS[] = {
#define ACP_TEST(name) {#name, test_##name},
#include "tests.def"
#undef ACP_TEST
};

int main(int argc, char **argv) {
  size_t n = sizeof TESTS / sizeof TESTS[0];
  /* A peer that goes away must not kill the test with SIGPIPE. */
  signal(SIGPIPE, SIG_IGN);
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < n; i++) printf("%s\n", TESTS[i].name);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: %s TEST_NAME | --list\n", argv[0]);
    return 2;
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(argv[1], TESTS[i].name) == 0) {
      TESTS[i].run();
      printf("PASS %s\n", TESTS[i].name);
      return 0;
    }
  }
  fprintf(stderr, "no test named %s\n", argv[1]);
  return 2;
}
