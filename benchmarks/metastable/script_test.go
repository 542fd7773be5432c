// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docs/benchmarks.md's "Reproduce" lists, beside the run that draws
// docs/metastable.svg, the runs behind the text's other figures: the
// throttler's recovery over 90 s and the 10-client split. Run as
// documented (no PLOT=), metastable.sh hands those runs -plot
// ../docs/metastable.svg too, so reproducing a figure of the text replaces
// the committed nine-panel plot of the table with a two- or four-panel plot
// of another scenario. The script is run with a stand-in for go whose
// "built" command only records its arguments: nothing is written to docs/.
func TestReproduceCommandsDoNotOverwriteTheCommittedPlot(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(tmp, "args")
	// go build -o FILE ./metastable: FILE records its arguments.
	fakeGo := "#!/usr/bin/env bash\n" +
		"if [ \"$1\" = build ] && [ \"$2\" = -o ]; then\n" +
		"  printf '#!/usr/bin/env bash\\nprintf \"%%s\\\\n\" \"$@\" >> " + argsFile + "\\necho ---- >> " + argsFile + "\\n' > \"$3\"\n" +
		"  chmod +x \"$3\"; exit 0\nfi\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../metastable.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-after", "90s", "-configs", "no-retry,failsafehttp-throttler"},
		{"-clients", "10", "-configs", "no-retry,otelretry,aws-quota,grpc-throttle"},
	} {
		_ = os.Remove(argsFile)
		cmd := exec.Command(bash, append([]string{script}, args...)...)
		env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "OUT=" + filepath.Join(tmp, "out")}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "PLOT=") && !strings.HasPrefix(kv, "OUT=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("metastable.sh %v: %v\n%s", args, err, out)
		}
		got, err := os.ReadFile(argsFile)
		if err != nil {
			t.Fatal(err)
		}
		passed := strings.Fields(string(got))
		for i, a := range passed {
			if a == "-plot" && i+1 < len(passed) && strings.HasSuffix(passed[i+1], "docs/metastable.svg") {
				t.Errorf("bash benchmarks/metastable.sh %s (a documented Reproduce command) runs the benchmark with -plot %s: "+
					"it overwrites the committed plot of the nine-configuration table (script said: %s)",
					strings.Join(args, " "), passed[i+1], strings.TrimSpace(string(out)))
			}
		}
	}
}
