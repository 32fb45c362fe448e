package runner

import "testing"

// TestSuccessPath: a job's record is at the first of its paths in sorted
// order, whatever order they were given in, so forget given the job's
// --path set finds the record the job keeps.
func TestSuccessPath(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{"/a"}, "/a"},
		{[]string{"/locks/report", "/locks/db"}, "/locks/db"},
		{[]string{"/b/x", "/a/z", "/a/y"}, "/a/y"},
	} {
		if got := successPath(tc.paths); got != tc.want {
			t.Errorf("successPath(%q) = %q, want %q", tc.paths, got, tc.want)
		}
	}
}
