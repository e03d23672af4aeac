package cli

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_semfs semfs",
		"zsh":        "#compdef semfs",
		"fish":       "complete -c semfs",
		"powershell": "Register-ArgumentCompleter -CommandName 'semfs'",
	} {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), []string{"completion", shell}, nil, &out, &errb); code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errb.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("completion %s lacks %q", shell, want)
		}
	}
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"completion", "tcsh"}, nil, &out, &errb); code != ExitUsage {
		t.Errorf("completion tcsh: exit %d, want %d (usage)", code, ExitUsage)
	}
}

// The bash script really completes: source it and ask for the words after
// "semfs se".
func TestCompletionBashCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: apt-get install bash to run this test")
	}
	var script, errb bytes.Buffer
	if code := Run(context.Background(), []string{"completion", "bash"}, nil, &script, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	// The generated script calls the program for the candidates
	// (semfs __complete ...); stand in for it with this test's own Run.
	var cands bytes.Buffer
	if code := Run(context.Background(), []string{"__complete", "se"}, nil, &cands, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	got := cands.String()
	for _, w := range []string{"search\t", "serve\t"} {
		if !strings.Contains(got, w) {
			t.Errorf("__complete se = %q, lacks %q", got, w)
		}
	}
	if strings.Contains(got, "version") {
		t.Errorf("__complete se offers version: %q", got)
	}
	cmd := exec.Command(bash, "-n")
	cmd.Stdin = &script
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("bash -n on the completion script: %v\n%s", err, out)
	}
}
