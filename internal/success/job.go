package success

import "slices"

// JobPath is the lock path whose record a job holding paths keeps: the
// first in sorted order, which the job's ZKLOCK_PATH names too. Run
// writes it there and forget, given the same --path set in any order,
// finds it there.
func JobPath(paths []string) string { return slices.Min(paths) }
