//go:build unix

package lockexec

// WithoutSIGTTOU runs f so that a write it makes to a terminal whose
// foreground belongs to the command goes through instead of stopping
// zklock under `stty tostop`. Run's own calls to Spec.Warn and
// Spec.Started are made this way already; a caller writing from another
// goroutine while the command runs uses it for the same reason.
func WithoutSIGTTOU(f func()) { withoutSIGTTOU(f) }
