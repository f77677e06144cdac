/* rig top (rig(1)): a live view of rigd's clients and served devices.  On
 * a terminal (a pty that script(1) makes) it takes the alternate screen,
 * draws a frame, draws the next a second later, and ends at q or SIGTERM
 * with the terminal given back as it was (the screen left, the cursor
 * shown, canonical mode and echo on); not on a terminal it prints plain
 * frames.  Each frame shows a client rigd serves with its pid and the
 * memory it holds.
 *
 * No rule ID: the tool is rig(1)'s, not the spec's. */
#include "client_process.hpp"
#include "known_work.hpp"
#include "rigd_process.hpp"
#include "tool_run.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

namespace {

constexpr int64_t held = 3 << 20;  // "3.0 MiB" in a frame

// What the alternate screen's entry and exit look like on the pty.
const std::string enter_screen = "\033[?1049h\033[?25l", leave_screen = "\033[?25h\033[?1049l";
// Each frame starts at the screen's top.
const std::string frame_start = "\033[H";

// "rig top --service SOCKET" then tail, for a shell.  Appended piece by
// piece: a chain of + trips a false -Wrestrict of GCC 12.
std::string top_command(const std::string &socket, const std::string &tail) {
  std::string command = RIG_TOOL_PATH;
  command += " top --service ";
  command += socket;
  command += tail;
  return command;
}

// A client that holds held bytes of MEM:0@rigd, tells link, and holds
// them until the test closes its end.
pid_t holder(const std::string &socket, Channel &link) {
  return start_on_link(
      link,
      [&](int end) {
        connect_service(socket);
        rig_buffer_t *b = create_buffer(open_device("MEM:0@rigd"), held);
        uint64_t v;
        require(send_value(end, 1), "the test is gone");
        receive_value(end, v, 60000);
        rig_buffer_unref(b);
        return 0;
      },
      "the holder allocated");
}

// A pid as a frame's column shows it, between spaces.  Appended piece by
// piece, as top_command.
std::string column_of(pid_t pid) {
  std::string column = " ";
  column += std::to_string(pid);
  column += ' ';
  return column;
}

size_t count_of(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// script(1) running shell_command on a pty, its typescript at path, its
// input the write end of keys.
struct Script {
  pid_t pid = -1;
  int keys = -1;
  std::string path;

  Script(const std::string &shell_command, std::string typescript) : path(std::move(typescript)) {
    int input[2];
    cr_assert(pipe2(input, O_CLOEXEC) == 0);
    pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
      dup2(input[0], STDIN_FILENO);
      int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      execlp("script", "script", "-qfec", shell_command.c_str(), path.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    close(input[0]);
    keys = input[1];
  }
  ~Script() {
    if (keys >= 0) close(keys);
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

  // Waits until the typescript holds frames frames, each with words;
  // answers the typescript then.
  std::string await_frames(size_t frames, const std::string &words) {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string text;
    while (std::chrono::steady_clock::now() < give_up) {
      text = read_file(path);
      if (count_of(text, frame_start) >= frames && count_of(text, words) >= frames) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return text;
  }

  // Waits up to timeout_s for script to exit; its status, -1 where it ran on.
  int await_exit(int timeout_s) {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > give_up) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

}  // namespace

/* On a terminal: the alternate screen, two frames a second apart each
 * showing the holder (its pid and 3.0 MiB), and q ends rig top at once
 * with status 0 and the terminal as it was: the screen left, and stty's
 * canonical mode and echo on again. */
Test(top, on_a_terminal_it_draws_refreshes_and_ends_at_q, .timeout = 90) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Channel link;
  pid_t client = holder(rigd.socket, link);
  std::string mine = column_of(client);
  Script script(top_command(rigd.socket, "; echo \"top ended $?\"; stty -a"), rigd.directory + "/typescript");
  std::string text = script.await_frames(2, mine);
  cr_assert(text.find(enter_screen) != std::string::npos, "rig top takes the alternate screen:\n%s", text.c_str());
  cr_assert(count_of(text, frame_start) >= 2 && count_of(text, mine) >= 2 &&
                count_of(text, "3.0 MiB") >= 2,
            "two frames, each with the holder's pid and memory:\n%s", text.c_str());
  cr_assert(text.find(leave_screen) == std::string::npos, "still running after two frames");
  cr_assert(write(script.keys, "q", 1) == 1);
  cr_assert_eq(script.await_exit(10), 0, "q ends rig top, and script with it");
  text = read_file(script.path);
  size_t left = text.find(leave_screen);
  cr_assert(left != std::string::npos, "the screen is given back:\n%s", text.c_str());
  cr_assert(text.find("top ended 0", left) != std::string::npos, "rig top exits 0 at q:\n%s", text.c_str());
  cr_assert(text.find(" icanon") != std::string::npos && text.find("-icanon") == std::string::npos &&
                text.find(" echo ") != std::string::npos && text.find("-echo ") == std::string::npos,
            "canonical mode and echo are on again:\n%s", text.c_str());
  link.close_end(0);
  cr_assert(ended_cleanly(await_client(client, client_end_s)));
}

/* SIGTERM ends rig top as q does: the screen left and the terminal's
 * modes back, though its wait for a key was under way. */
Test(top, sigterm_gives_the_terminal_back, .timeout = 90) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Script script(
      top_command(rigd.socket, " </dev/tty & top=$!; sleep 2; kill -TERM $top; wait $top; echo \"top ended $?\"; stty -a"),
      rigd.directory + "/typescript");
  cr_assert_eq(script.await_exit(30), 0, "the shell ran through");
  std::string text = read_file(script.path);
  size_t left = text.find(leave_screen);
  cr_assert(text.find(enter_screen) != std::string::npos && left != std::string::npos,
            "the screen taken, then given back:\n%s", text.c_str());
  cr_assert(text.find("top ended 0", left) != std::string::npos, "%s", text.c_str());
  cr_assert(text.find("-icanon") == std::string::npos && text.find("-echo ") == std::string::npos,
            "canonical mode and echo are on again:\n%s", text.c_str());
}

/* Not on a terminal: --frames 2 prints two plain frames a second apart,
 * without escapes, each with the holder, and exits 0. */
Test(top, not_on_a_terminal_it_prints_plain_frames, .timeout = 90) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Channel link;
  pid_t client = holder(rigd.socket, link);
  auto start = std::chrono::steady_clock::now();
  ToolRun top = run_rig({"top", "--service", rigd.socket, "--frames", "2"});
  double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cr_assert_eq(top.status, 0, "%s", top.err.c_str());
  cr_assert(top.out.find('\033') == std::string::npos, "no escapes:\n%s", top.out.c_str());
  cr_assert_eq(count_of(top.out, "rig top - rigd at " + rigd.socket), 2u, "%s", top.out.c_str());
  cr_assert_eq(count_of(top.out, column_of(client)), 2u, "%s", top.out.c_str());
  cr_assert_eq(count_of(top.out, "3.0 MiB"), 4u, "the holder's memory and MEM:0's, in each frame:\n%s",
               top.out.c_str());
  cr_assert(took_s >= 0.9, "the second frame a second after the first (%.2f s)", took_s);
  link.close_end(0);
  cr_assert(ended_cleanly(await_client(client, client_end_s)));
}
