/* The terminal of a full-screen view (terminal.h). */
#define _POSIX_C_SOURCE 200809L

#include "terminal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static bool keys_raw, taken;
static volatile sig_atomic_t ended;

/* Alternate screen on, cursor hidden; and back. */
static const char enter_screen[] = "\033[?1049h\033[?25l";
static const char leave_screen[] = "\033[?25h\033[?1049l";

static void write_all(const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(STDOUT_FILENO, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

/* Async-signal-safe: tcsetattr and write only. */
static void give_back(void) {
  if (!taken) return;
  taken = false;
  if (keys_raw) tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
  write_all(leave_screen, sizeof leave_screen - 1);
}

static void on_ending_signal(int signal) {
  (void)signal;
  give_back();
  ended = 1;
}

bool terminal_take(void) {
  if (!isatty(STDOUT_FILENO)) return false;
  if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
    struct termios raw = saved;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    keys_raw = tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0;
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_ending_signal;
  sigemptyset(&action.sa_mask);
  /* No SA_RESTART: the view's wait for a key ends at the signal. */
  for (int s = 0; s < 3; s++) sigaction((int[]){SIGINT, SIGTERM, SIGHUP}[s], &action, NULL);
  taken = true;
  atexit(give_back);
  write_all(enter_screen, sizeof enter_screen - 1);
  return true;
}

void terminal_restore(void) { give_back(); }

bool terminal_ended(void) { return ended != 0; }

int terminal_key(int timeout_ms) {
  struct pollfd in = {keys_raw ? STDIN_FILENO : -1, POLLIN, 0};
  if (poll(&in, 1, timeout_ms) <= 0 || !(in.revents & POLLIN)) return 0;
  unsigned char key;
  return read(STDIN_FILENO, &key, 1) == 1 ? key : 0;
}

void terminal_size(int *columns, int *rows) {
  struct winsize size;
  bool known = ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 && size.ws_row > 0;
  *columns = known ? size.ws_col : 80;
  *rows = known ? size.ws_row : 24;
}
