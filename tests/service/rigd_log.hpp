// The log of a rigd a test started: its stderr in a file of the rigd's
// directory, read back line by line.
#pragma once

#include "rigd_process.hpp"

#include <string>
#include <vector>

// In rigd's child (start_rigd_with_config's in_child): stderr goes to
// directory/rigd.log, and, with journal, JOURNAL_STREAM names it as
// systemd's journal stream would.
void log_to_file(const std::string &directory, bool journal = false);

std::vector<std::string> lines_of(const RigdProcess &rigd);
// The lines of rigd's log that hold every one of words.
std::vector<std::string> lines_with(const RigdProcess &rigd, const std::vector<std::string> &words);
// Waits, within a bound only a hang reaches, until rigd's log has n lines
// with words; answers those it has.
std::vector<std::string> await_lines(const RigdProcess &rigd, const std::vector<std::string> &words, size_t n = 1);
// The whole log, for a failure's message.
std::string whole_log(const RigdProcess &rigd);
