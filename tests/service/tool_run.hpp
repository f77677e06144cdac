// The built rig tool (RIG_TOOL_PATH), run by a test of rigd.
#pragma once

#include <functional>
#include <string>
#include <vector>

struct ToolRun {
  int status = -1;  // the exit status, or -1 where it did not exit
  std::string out, err;
};

// Runs rig with arguments and waits for it; in_child runs in its process
// before it execs (setgroups, setuid).  Fails the test where it runs past
// 60 s.
ToolRun run_rig(const std::vector<std::string> &arguments, const std::function<void()> &in_child = {});
