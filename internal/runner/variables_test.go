package runner

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/recipe"
)

// TestCommandVariablesDocumented: the variables environment gives the
// command are exactly those CommandVariables documents (with a pool's, as
// a run of a pool gets them).
func TestCommandVariablesDocumented(t *testing.T) {
	t.Setenv(EnvHeld, "")
	h := held{inherited: []inherited{{hold: hold{Mode: recipe.ModeExclusive, Session: 0x10, PID: 42, Node: "/locks/a/_c_x-lock-0000000001"}, Token: 7}}, resources: []string{"a"}}
	env, err := environment(context.Background(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	// What environment adds follows the environment it inherits.
	inherited := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, EnvHeld+"=") })
	var set []string
	for _, kv := range env[len(inherited):] {
		name, _, _ := strings.Cut(kv, "=")
		set = append(set, name)
	}
	var documented []string
	for _, v := range CommandVariables {
		documented = append(documented, strings.Split(v.Name, ", ")...)
	}
	slices.Sort(set)
	slices.Sort(documented)
	if !slices.Equal(set, documented) {
		t.Errorf("the command gets %v; CommandVariables documents %v", set, documented)
	}
}
