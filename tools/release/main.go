// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command release is the Go part of the release procedure; the scripts
// under scripts/ drive it from the repository root:
//
//	release modules                   the published modules in dependency order: DIR PATH TAG-PREFIX
//	release bump X.Y.Z                the version commit's edits: [Unreleased] becomes [X.Y.Z] - today, Version X.Y.Z
//	release check [-released] X.Y.Z  Version, the CHANGELOG and the module requirements agree on X.Y.Z
//	release prepare X.Y.Z             the release commit's edits: requirements at vX.Y.Z, no replace, go.sum
//	release proxy -dir DIR X.Y.Z      a file-system module proxy of the published modules' tags
//	release api-write [-from DIR]     the API baseline (api/) of the modules in DIR (default: here)
//	release api-check                 the API against api/, judged by the CHANGELOG's next version
//
// It runs in the repository root, a clone or a worktree; proxy needs a
// clone (a .git directory), as golang.org/x/mod/zip reads tags through it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

const usage = `usage (from the repository root):
  release modules
  release bump X.Y.Z
  release check [-released] X.Y.Z
  release prepare X.Y.Z
  release proxy -dir DIR X.Y.Z
  release api-write [-from DIR]
  release api-check
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet("release "+cmd, flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	var err error
	switch cmd {
	case "modules":
		fs.Parse(args)
		err = printModules()
	case "bump":
		fs.Parse(args)
		err = bump(".", version(fs), time.Now().UTC())
	case "check":
		released := fs.Bool("released", false, "the requirements are those of the release commit")
		fs.Parse(args)
		err = check(version(fs), *released)
	case "prepare":
		fs.Parse(args)
		err = prepare(version(fs))
	case "proxy":
		dir := fs.String("dir", "", "the proxy's directory (created)")
		fs.Parse(args)
		if *dir == "" {
			fs.Usage()
			os.Exit(2)
		}
		err = writeProxy(*dir, version(fs))
	case "api-write":
		from := fs.String("from", ".", "the tree whose API becomes the baseline (a checkout of a release)")
		fs.Parse(args)
		err = apiWrite(*from)
	case "api-check":
		fs.Parse(args)
		err = apiCheck()
	default:
		fs.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release "+cmd+":", err)
		os.Exit(1)
	}
}

// version returns the one argument, a release version X.Y.Z.
func version(fs *flag.FlagSet) string {
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	v := fs.Arg(0)
	if !isRelease(v) {
		fmt.Fprintf(os.Stderr, "release: %q is not a release version X.Y.Z (no v, no pre-release)\n", v)
		os.Exit(2)
	}
	return v
}
