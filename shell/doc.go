// Package shell is semfs's virtual shell: bash-syntax scripts (pipes,
// redirections, globs, cd, variables, loops, command substitution, heredocs)
// whose commands are Go builtins over a [semfs.FS]. It is built on
// mvdan.cc/sh/v3's parser and interpreter with every host-facing handler
// replaced: no host process is ever spawned, no host path is reachable, and
// an unknown command fails with exit status 127.
//
// # Sessions
//
// [New] opens a [Session] over a tree; [Session.Run] runs one script. State
// (working directory, variables, functions) persists from one Run to the
// next, as in an interactive shell. A session built with a [View] (from a
// [Tree] built once per tree with [NewTree] and pruned to a principal's
// groups with [Tree.View]) answers ls, find, globs, stat, cd and test from
// memory, so opening a session costs microseconds; files hidden from the
// principal do not exist for the session in any command, glob, error message,
// search result or count. Without a view, listings go to the FS itself.
// Reads of file contents always go to the FS.
// [Tree.Encode] and [LoadTree] persist a tree's shape, so that a store can
// keep it and sessions start without walking the files.
//
// # Builtins
//
// ls cat grep find head tail wc sort uniq cut tr xargs tree stat du mkdir
// echo printf basename dirname true false test [ cd pwd help, plus search
// (content search through [semfs.SearchFS]), query (tag query through
// [semfs.QueryFS]) and tag ([semfs.SetTags]). For the flags they support,
// their output and exit status match GNU coreutils, findutils, grep and
// tree 2.x byte for byte; differential tests run a table of 370 commands
// and 1,900 seeded random command lines both ways. Known differences are
// listed in each builtin's file. "help" lists the commands and "COMMAND
// --help" the options a builtin supports; an unknown option's message lists
// them too.
//
// # Errors for agents
//
// Messages follow GNU's wording and add what an agent needs to fix the
// command: a missing path gets the visible paths with the same or a close
// name ("cat: guide.md: No such file or directory (did you mean
// ./docs/guide.md?)"), an unknown command the closest builtin, a directory
// where a file was expected the command to use instead. Suggestions come
// from what the session can see, never from hidden paths.
//
// # Writes
//
// Redirections (> and >>) and mkdir write through [semfs.WriteFile] and
// [semfs.Mkdir]; on a tree without writers, or with Options.ReadOnly, they
// fail with "Read-only file system" (EROFS). A session with a View sees its
// own writes at once; writes by others appear in views of a newer Tree.
// Writes to a path hidden from the session, or below a hidden directory,
// are refused ("Permission denied"); the access layer enforces the same in
// production.
//
// # Limits
//
// [Limits] caps a run's output size, run time and loop iterations; a
// runaway script is stopped with a message on stderr and exit status 124.
// Process substitution, background jobs and coprocesses are refused before
// the script starts (exit status 2), and so is eval'd text holding them.
//
// # Indexed grep
//
// grep -r asks a tree implementing [semfs.GrepCandidatesFS] for candidate
// files and matches only those, exactly; without an index it scans. Reads
// of files go through a bounded cache kept per [Tree] (by path, size and
// modification time), and matching runs in parallel.
package shell
