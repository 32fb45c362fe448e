package recipe

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMutexProgramDependencies: a program that only takes a mutex
// (testdata/mutex) links the recipes, the session and go-zookeeper, and
// none of what only zklock's command line needs: not the Kerberos stack
// (zkconn/sasl and gokrb5), not cobra, TOML or colour.
func TestMutexProgramDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./testdata/mutex").Output()
	if err != nil {
		t.Fatalf("go list -deps ./testdata/mutex: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{"github.com/zklock/zklock/internal/recipe", "github.com/zklock/zklock/zkconn", "github.com/go-zookeeper/zk"} {
		if !contains(deps, want) {
			t.Errorf("the program does not link %s: %v", want, deps)
		}
	}
	for _, d := range deps {
		for _, unwanted := range []string{"github.com/zklock/zklock/zkconn/sasl", "github.com/jcmturner/", "github.com/spf13/", "github.com/pelletier/", "github.com/fatih/"} {
			if strings.HasPrefix(d, unwanted) {
				t.Errorf("a program that only takes a mutex links %s", d)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
