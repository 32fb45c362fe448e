package success

import "testing"

// TestJobPath: a job's record is at the first of its paths in sorted
// order, whatever order they were given in, so forget given the job's
// --path set finds the record the job keeps.
func TestJobPath(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{"/a"}, "/a"},
		{[]string{"/locks/report", "/locks/db"}, "/locks/db"},
		{[]string{"/b/x", "/a/z", "/a/y"}, "/a/y"},
	} {
		if got := JobPath(tc.paths); got != tc.want {
			t.Errorf("JobPath(%q) = %q, want %q", tc.paths, got, tc.want)
		}
	}
}
